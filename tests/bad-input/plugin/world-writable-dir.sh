cp "$TP/testload.so" "$PLUGIN" && chmod 0777 "$P"
