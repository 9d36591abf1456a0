cp "$TP/testload.so" "$PLUGIN" && chmod o+w "$PLUGIN"
