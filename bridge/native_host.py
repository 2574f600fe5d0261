"""``python -m bridge.native_host``: kept for native-host wrappers that bridge 0.2 registered
(they run this module); the host itself is ``bridge.link.native_host``, which
``bridge install-native-host`` registers now."""

import sys

from bridge.link.native_host import main

if __name__ == "__main__":
    sys.exit(main())
