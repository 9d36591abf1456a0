printf "this is a text file, not a plugin\n" >"$PLUGIN"
