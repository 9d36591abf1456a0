cp /bin/true "$PLUGIN"
