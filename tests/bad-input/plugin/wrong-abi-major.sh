cp "$TP/abi_major.so" "$PLUGIN"
