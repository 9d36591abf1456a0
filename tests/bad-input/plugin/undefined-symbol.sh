cp "$TP/undefined_sym.so" "$PLUGIN"
