cp "$TP/no_entry.so" "$PLUGIN"
