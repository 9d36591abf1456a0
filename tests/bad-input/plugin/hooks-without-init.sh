# plugin: no_init
cp "$TP/no_init.so" "$PLUGIN"
