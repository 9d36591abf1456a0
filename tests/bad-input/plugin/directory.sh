mkdir "$PLUGIN"
