: >"$PLUGIN"
