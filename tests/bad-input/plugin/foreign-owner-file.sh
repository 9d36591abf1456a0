[ "$(id -u)" -eq 0 ] || exit 77
cp "$TP/testload.so" "$PLUGIN" && chown 65534 "$PLUGIN"
