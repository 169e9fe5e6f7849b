// Zoom and hover for a Sepia timeline: every shape keeps its times in data-a / data-b, so a
// new view [low, high] only recomputes x coordinates. No library, no network.
(function () {
  "use strict";
  const svg = document.getElementById("timeline");
  const tip = document.getElementById("tip");
  const left = +svg.dataset.left, right = +svg.dataset.right;
  const home = [+svg.dataset.low, +svg.dataset.high];
  let view = home.slice();
  const X = (t) => left + (t - view[0]) / (view[1] - view[0]) * (right - left);
  const T = (x) => view[0] + (x - left) / (right - left) * (view[1] - view[0]);

  function place() {
    svg.dataset.low = view[0];
    svg.dataset.high = view[1];
    for (const s of svg.querySelectorAll(".marks [data-a]")) {
      const a = +s.dataset.a, b = s.dataset.b === undefined ? a : +s.dataset.b;
      switch (s.tagName) {
        case "circle": s.setAttribute("cx", X(a)); break;
        case "rect": s.setAttribute("x", X(a)); s.setAttribute("width", Math.max(X(b) - X(a), 0)); break;
        case "line": s.setAttribute("x1", X(a)); s.setAttribute("x2", X(b)); break;
        case "text": s.setAttribute("x", X(a) + (+s.dataset.dx || 0)); break;
        case "path": s.setAttribute("transform", "translate(" + X(a) + "," + s.dataset.y + ")"); break;
      }
    }
    axis();
  }

  function axis() {
    const g = svg.querySelector(".axis");
    const span = view[1] - view[0];
    const raw = span / 10, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw);
    let out = '<line x1="' + left + '" x2="' + right + '" y1="0" y2="0"/>';
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      const v = Math.abs(t) < 1e-9 ? 0 : +t.toPrecision(12);
      out += '<line class="tick" x1="' + X(v) + '" x2="' + X(v) + '" y1="0" y2="5"/>' +
        '<text x="' + X(v) + '" y="18" text-anchor="middle">' + v + "</text>";
    }
    g.innerHTML = out;
  }

  function zoom(factor, at) {
    const t = at === undefined ? (view[0] + view[1]) / 2 : at;
    view = [t - (t - view[0]) * factor, t + (view[1] - t) * factor];
    place();
  }

  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const box = svg.getBoundingClientRect();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, T(e.clientX - box.left));
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", (e) => { drag = { x: e.clientX, view: view.slice() }; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const shift = (e.clientX - drag.x) / (right - left) * (drag.view[1] - drag.view[0]);
    view = [drag.view[0] - shift, drag.view[1] - shift];
    place();
  });
  const reset = () => { view = home.slice(); place(); };
  svg.addEventListener("dblclick", reset);
  document.getElementById("reset").addEventListener("click", reset);
  document.getElementById("zoom-in").addEventListener("click", () => zoom(0.8));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(1.25));

  function lit(mark, on) {
    for (const id of (mark.dataset.lights || "").split(" ").filter(Boolean)) {
      const el = document.getElementById(id);
      if (el) el.classList.toggle("hot", on);
    }
  }
  for (const mark of svg.querySelectorAll(".mark[data-tip]")) {
    mark.addEventListener("mouseover", (e) => {
      tip.textContent = mark.dataset.tip;
      tip.hidden = false;
      tip.style.left = (e.clientX + 12) + "px";
      tip.style.top = (e.clientY + 12) + "px";
      mark.classList.add("hot");
      lit(mark, true);
    });
    mark.addEventListener("mouseout", () => {
      tip.hidden = true;
      mark.classList.remove("hot");
      lit(mark, false);
    });
  }
  place();
})();
