// 静态网页上的滑块播放器：拖动原生 range 滑块 = 换一帧预先画好的图。没有内核、没有网络也能用。
// 数据是同一个 .tlx 元素里 class 为 tlx-data 的 JSON 脚本块；格式由 static.py 定义。
// 每一帧有两种版式：<picture> 的 <source>（窄版，手机）和 <img>（宽版，电脑），浏览器按屏幕宽度只取一种。
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
    if (data.urls) {  // 网站上帧是单独的文件：图快进入视野时再预取正在显示的那种版式，页面首次加载只下载第一帧
      var prefetch = function () {
        data.urls[narrow.matches ? "narrow" : "wide"].forEach(function (u) { new Image().src = u; });
      };
      if (!("IntersectionObserver" in window)) { prefetch(); return; }
      var seen = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); prefetch(); }
      }, {rootMargin: "600px"});
      seen.observe(root);
    }
  });
})();
