"""The vision tools' local page: boxes where the tests put them (a button, two coloured
squares, a slider, a far paragraph on a tall page), served on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator

from tests.local_http import HTML, serve_files

PAGE = """<!doctype html><title>Vision</title><style>
body { margin: 0; height: 4000px }
#b { position: absolute; left: 100px; top: 80px; width: 120px; height: 40px }
#red { position: absolute; left: 300px; top: 50px; width: 40px; height: 40px; background: #f00 }
#blue { position: absolute; left: 340px; top: 50px; width: 40px; height: 40px; background: #00f }
#s { position: absolute; left: 50px; top: 200px; width: 300px; margin: 0 }
#log { position: absolute; left: 10px; top: 150px; margin: 0 }
#far { position: absolute; left: 10px; top: 3000px }
#alert { position: absolute; left: 400px; top: 200px; width: 80px; height: 30px }
#next { position: absolute; left: 500px; top: 200px }
#spin { position: absolute; left: 400px; top: 300px; width: 50px; height: 50px }
</style>
<button id=alert onclick="alert('Saved!')">Alert</button>
<a id=next href="#second">Next</a>
<div id=spin></div><p id=ticks></p>
<script>
// A page that never stops drawing: every frame a new colour, counted (ticks:N).
function spin(limit) {
  let n = 0;
  const step = () => {
    n += 1;
    document.getElementById('spin').style.background = `hsl(${(n * 37) % 360} 80% 50%)`;
    document.getElementById('ticks').textContent = 'ticks:' + n;
    if (n < limit) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}
</script>
<button id=b onclick="log.textContent += 'click' + event.detail + ';'">Press</button>
<div id=red></div><div id=blue></div>
<input type=range id=s min=0 max=100 value=0>
<p id=log></p><p id=far>Far away</p>"""


def serve_vision_page() -> Iterator[str]:
    """The page's URL until closed."""
    for url in serve_files(lambda _: (PAGE.encode(), HTML)):
        yield f"{url}/vision"
