// 自测小部件的判分脚本：没有内核、没有网络也能用。题目和反馈都已写在 HTML 里（格式由 html.py 定义），
// 这里只负责：读读者的答案 → 判对错 → 把对应的反馈、讲解、计算和回看链接复制进反馈区 → 更新得分。
// 讲解（含答案）要等答对、或者第二次提交之后才显示：第一次答错只说错在哪、给回看链接，留一次自己再想的机会。
// “先猜后看”题猜完就揭晓——它本来就是先猜、再看计算。
(function () {
  function parseNumber(text) {
    var t = text.replace(/[\s_]/g, "").replace(/[０-９．－，]/g, function (c) {
      return String.fromCharCode(c.charCodeAt(0) - 0xFEE0);
    }).replace(/−/g, "-");
    // 逗号只认千位分隔（1,048,576：第一组不以 0 开头，后面每组三位）；“0,984”“11,0”这种逗号小数不猜它的意思，请读者改写
    if (t.indexOf(",") >= 0) {
      if (!/^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$/.test(t)) return null;
      t = t.replace(/,/g, "");
    }
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
    return Number(t);
  }
  function copy(q, selector, into) {
    q.querySelectorAll(selector).forEach(function (t) {
      var c = t.cloneNode(true);
      c.hidden = false;
      into.appendChild(c);
    });
  }
  // 元素 id 的前缀由题目内容算出：同一页上有两份一模一样的自测（比如两个 notebook 都显示了第 4 章的题）时，
  // 给后一份换一个没人用的前缀，否则两份的单选组会连在一起、标签会指到前一份的选项上。
  function renamePrefix(root) {
    var old = root.id, n = 2;
    while (document.getElementById(old + "-" + n)) n++;
    var fresh = old + "-" + n;
    function swap(value) { return value.indexOf(old) === 0 ? fresh + value.slice(old.length) : value; }
    root.id = fresh;
    root.querySelectorAll("[id]").forEach(function (el) { el.id = swap(el.id); });
    root.querySelectorAll("label[for]").forEach(function (el) { el.htmlFor = swap(el.htmlFor); });
    root.querySelectorAll("input[name]").forEach(function (el) { el.name = swap(el.name); });
  }
  document.querySelectorAll(".tlq:not([data-ready])").forEach(function (root) {
    if (document.getElementById(root.id) !== root) renamePrefix(root);
    root.setAttribute("data-ready", "1");
    var total = Number(root.getAttribute("data-total"));
    var score = root.querySelector(".tlq-score");
    var questions = root.querySelectorAll(".tlq-q");
    function updateScore() {
      var answered = root.querySelectorAll(".tlq-q[data-result]").length;
      var right = root.querySelectorAll('.tlq-q[data-result="right"]').length;
      score.textContent = "得分：" + right + " / " + total + "（已答 " + answered + " 题）";
    }
    function judge(q) {
      var kind = q.getAttribute("data-kind"), box = q.querySelector(".tlq-feedback");
      var ok, chosen = null;
      box.textContent = "";
      box.className = "tlq-feedback";
      if (kind === "number") {
        var value = parseNumber(q.querySelector("input").value);
        if (value === null) {
          box.classList.add("tlq-empty");
          box.textContent = "请先在框里填一个数（例如 0.5 或 64）。";
          return;
        }
        ok = Math.abs(value - Number(q.getAttribute("data-answer"))) <= Number(q.getAttribute("data-tolerance")) + 1e-12;
      } else {
        var picked = q.querySelector("input:checked");
        if (!picked) {
          box.classList.add("tlq-empty");
          box.textContent = "请先选一个选项。";
          return;
        }
        chosen = picked.value;
        ok = chosen === q.getAttribute("data-correct");
      }
      var tries = Number(q.getAttribute("data-tries") || 0) + 1;
      q.setAttribute("data-tries", String(tries));
      var explained = ok || tries >= 2 || kind === "predict";
      q.setAttribute("data-result", ok ? "right" : "wrong");
      box.classList.add(ok ? "tlq-right" : "tlq-wrong");
      var verdict = document.createElement("p");
      verdict.className = "tlq-verdict";
      verdict.textContent = ok ? "✔ 答对了。" : "✘ 还不对。";
      box.appendChild(verdict);
      if (chosen !== null) copy(q, '.tlq-why[data-choice="' + chosen + '"]', box);
      if (explained) {
        copy(q, ".tlq-explain, .tlq-reveal, .tlq-link", box);
      } else {
        var again = document.createElement("p");
        again.className = "tlq-again";
        again.textContent = "再想想，改一改再提交；第二次提交后会显示讲解。";
        box.appendChild(again);
        copy(q, ".tlq-link", box);
      }
      updateScore();
    }
    questions.forEach(function (q) {
      q.querySelector(".tlq-submit").addEventListener("click", function () { judge(q); });
      var input = q.querySelector('input[type="text"]');
      if (input) input.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter") { ev.preventDefault(); judge(q); }
      });
    });
    root.querySelector(".tlq-reset").addEventListener("click", function () {
      questions.forEach(function (q) {
        q.removeAttribute("data-result");
        q.removeAttribute("data-tries");
        q.querySelectorAll("input").forEach(function (i) { if (i.type === "radio") i.checked = false; else i.value = ""; });
        var box = q.querySelector(".tlq-feedback");
        box.textContent = "";
        box.className = "tlq-feedback";
      });
      updateScore();
    });
  });
})();
