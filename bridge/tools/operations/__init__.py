"""``BrowserTools``' operations by family (``bridge.tools.browsing`` joins them): ``client``
(what they share), ``tabs``, ``navigation``, ``reading``, ``acting``."""
