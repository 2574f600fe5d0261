"""The CDP layer: sessions over any transport, the browser's tabs, the DevTools endpoint."""
