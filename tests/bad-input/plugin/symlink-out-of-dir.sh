ln -s "$TP/testload.so" "$PLUGIN"
