// 静态网页上的滑块播放器：拖动原生 range 滑块 = 换一帧预先画好的图。没有内核、没有网络也能用。
// 数据是同一个 .tlx 元素里 class 为 tlx-data 的 JSON 脚本块；格式由 static.py 定义。
// 每一帧有两种版式：<picture> 的 <source>（窄版，手机）和 <img>（宽版，电脑），浏览器按屏幕宽度只取一种。
// 预取的规则见下面 data.urls 一段（帧是文件时）。
(function () {
  document.querySelectorAll(".tlx:not([data-ready])").forEach(function (root) {
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script.tlx-data").textContent);
    var img = root.querySelector("img"), source = root.querySelector("source"), zoom = root.querySelector("a.tlx-zoom");
    var inputs = root.querySelectorAll("input.tlx-range"), outputs = root.querySelectorAll("output");
    var narrow = window.matchMedia ? window.matchMedia(data.media) : {matches: false};
    function url(layout, idx) {
      return data.urls ? data.urls[layout][idx] : "data:image/png;base64," + data.frames[layout][idx];
    }
    function point() {  // 点图打开的大图：屏幕上正在显示的那一帧（帧是文件时才有意义）
      if (data.urls && zoom) { zoom.href = img.currentSrc || img.src; }
    }
    function show() {
      var idx = 0;
      inputs.forEach(function (inp, i) {
        var s = data.sliders[i], v = s.values[Number(inp.value)];
        idx = idx * s.values.length + Number(inp.value);
        outputs[i].textContent = v;
        inp.setAttribute("aria-valuetext", s.label + " = " + v);
      });
      source.srcset = url("narrow", idx);
      img.src = url("wide", idx);
      img.alt = data.alts[idx];
      root.setAttribute("data-frame", idx);
    }
    inputs.forEach(function (inp) { inp.addEventListener("input", show); });
    img.addEventListener("load", point);
    point();
    if (data.urls) {
      // 网站上帧是单独的文件，只取正在显示的那种版式。图快进入视野时只预取"再拨一格"能看到的几帧（每个滑块左右各一格）；
      // 读者第一次碰这张图（按下、聚焦、拖动）时再取其余的帧，离当前位置近的先取。手机上只翻过去不碰的图就不多花流量。
      var asked = {};
      var layout = function () { return narrow.matches ? "narrow" : "wide"; };
      var fetch = function (indices) {
        indices.forEach(function (i) {
          var u = data.urls[layout()][i];
          if (!asked[u]) { asked[u] = true; new Image().src = u; }
        });
      };
      var position = function () {
        return Array.prototype.map.call(inputs, function (inp) { return Number(inp.value); });
      };
      var index = function (pos) {
        return pos.reduce(function (acc, p, i) { return acc * data.sliders[i].values.length + p; }, 0);
      };
      var near = function () {
        var pos = position(), out = [];
        pos.forEach(function (p, i) {
          [p - 1, p + 1].forEach(function (q) {
            if (q >= 0 && q < data.sliders[i].values.length) { var c = pos.slice(); c[i] = q; out.push(index(c)); }
          });
        });
        return out;
      };
      var everything = function () {  // 全部帧，按离当前位置的格数（各滑块相差的格数之和）从近到远
        var pos = position(), frames = [];
        (function walk(i, c, d) {
          if (i === pos.length) { frames.push([d, index(c)]); return; }
          for (var q = 0; q < data.sliders[i].values.length; q++) { walk(i + 1, c.concat([q]), d + Math.abs(q - pos[i])); }
        })(0, [], 0);
        frames.sort(function (a, b) { return a[0] - b[0]; });
        return frames.map(function (f) { return f[1]; });
      };
      var touched = false;
      var touch = function () { if (!touched) { touched = true; fetch(everything()); } };
      ["pointerdown", "focusin", "input"].forEach(function (name) { root.addEventListener(name, touch); });
      if (!("IntersectionObserver" in window)) { fetch(near()); return; }
      var seen = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); fetch(near()); }
      }, {rootMargin: "600px"});
      seen.observe(root);
    }
  });
})();
