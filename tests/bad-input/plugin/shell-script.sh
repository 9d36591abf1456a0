printf "#!/bin/sh\necho hi\n" >"$PLUGIN"
