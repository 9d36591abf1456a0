cp "$TP/short_desc.so" "$PLUGIN"
