cp "$TP/null_desc.so" "$PLUGIN"
