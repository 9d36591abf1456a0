head -c 200 "$TP/testload.so" >"$PLUGIN"
