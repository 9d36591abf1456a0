mkfifo "$PLUGIN"
