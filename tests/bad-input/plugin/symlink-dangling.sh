ln -s /nonexistent/testload.so "$PLUGIN"
