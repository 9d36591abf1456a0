# A plugin built against the 1.x headers (model tables, no model_api).
cp "$TP/abi_1x.so" "$PLUGIN"
