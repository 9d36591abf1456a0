cp "$TP/wrong_name.so" "$PLUGIN"
