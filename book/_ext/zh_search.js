/* 本书的中文搜索：查询切分与计分。由 book/_ext/zh_search.py 的 js_splitter_code（Sphinx 给搜索语言的钩子）
 * 放进 language_data.js（在 searchtools.js 之后加载）。附录页降权在 search_scorer.js（html_search_scorer）。
 * 切法必须和 zh_search.py 的 BookChineseSearch.split 一致：一段汉字 → 相邻两字（只有一个字时就是这个字），
 * 其他字母和数字 → 整个词（单个字母除外：索引里也没有）。 */
var HAN_RUN = /\p{Script=Han}+/u;
var QUERY_PART = /(\p{Script=Han}+)|((?:(?!\p{Script=Han})[\p{Letter}\p{Number}_])+)/gu;

var splitQuery = function (query) {
  var terms = [];
  for (var m of query.matchAll(QUERY_PART)) {
    if (m[2]) { if (m[2].length > 1) terms.push(m[2]); continue; }  // 单个字母不进索引（Q、K、V），也不当查询块
    var chars = Array.from(m[1]);
    if (chars.length === 1) terms.push(chars[0]);
    for (var i = 0; i + 1 < chars.length; i++) terms.push(chars[i] + chars[i + 1]);
  }
  return terms;
};

/* 正文计分：替换 Sphinx 7.x searchtools.js 的 Search.performTermsSearch。它不是文档里的钩子（Sphinx 没有
 * 给“哪些页算命中”留钩子；html_search_scorer 只能给已经命中的页改分），原来的版本要求查询的每一块都出现在
 * 同一页，自然的问句（“为什么要除以根号”）于是一无所获。替换只动这一个函数，输入输出和原来一样；
 * Jupyter Book 1 把 Sphinx 锁在 7.x，升级时 tests/site/test_search.py 和 tests/site/test_extensions.py 会发现它失灵。
 *
 * 列出哪些页：查询切出的块（书里根本没有的块也算在总数里）至少一半出现在这一页。
 * 怎么排序：按命中的块加权计分，权重 = log(1 + 页数 / 含这一块的页数)（越少页面用到越重要）；
 * 标题里命中加倍；两字块里的单字另计一半权重（问句和书里的说法只差一两个字时仍能排对：“是谁”/“指谁”）。 */
if (typeof Search !== "undefined") {
  Search.performTermsSearch = function (searchTerms, excludedTerms) {
    var index = Search._index;
    var files = function (table, word) {
      var f = table[word];
      return f === undefined ? [] : (Array.isArray(f) ? f : [f]);
    };
    var lookup = function (table, word) {
      var found = files(table, word);
      if (found.length || HAN_RUN.test(word) || word.length < 3) return found;
      // 拉丁字母的词允许部分匹配（“soft” 找到 “softmax”），与 Sphinx 原来一致
      var partial = new Set();
      Object.keys(table).forEach(function (term) {
        if (term.indexOf(word) !== -1) files(table, term).forEach(function (f) { partial.add(f); });
      });
      return Array.from(partial);
    };
    var docCount = index.docnames.length;
    var total = 0;
    var hit = new Map();    // 页面 → 命中的权重之和
    var count = new Map();  // 页面 → 命中了查询的几块（单字不算）
    var bonus = new Map();  // 页面 → 标题里命中的权重之和
    var add = function (word, factor) {
      var body = lookup(index.terms, word), title = lookup(index.titleterms, word);
      var pages = new Set(body.concat(title));
      if (!pages.size) return;
      if (factor === 1) pages.forEach(function (f) { count.set(f, (count.get(f) || 0) + 1); });
      var weight = factor * Math.log(1 + docCount / pages.size);
      total += weight;
      pages.forEach(function (f) { hit.set(f, (hit.get(f) || 0) + weight); });
      title.forEach(function (f) { bonus.set(f, (bonus.get(f) || 0) + weight); });
    };
    var singles = new Set();
    searchTerms.forEach(function (word) {
      add(word, 1);
      if (HAN_RUN.test(word) && word.length === 2) Array.from(word).forEach(function (c) { singles.add(c); });
    });
    singles.forEach(function (c) { if (!searchTerms.has(c)) add(c, 0.5); });
    var excluded = new Set();
    excludedTerms.forEach(function (word) {
      files(index.terms, word).concat(files(index.titleterms, word)).forEach(function (f) { excluded.add(f); });
    });
    var results = [];
    hit.forEach(function (weight, file) {
      if (excluded.has(file) || (count.get(file) || 0) < searchTerms.size / 2) return;
      var score = Math.round(100 * (weight + (bonus.get(file) || 0)) / total);
      results.push([index.docnames[file], index.titles[file], "", null, score, index.filenames[file]]);
    });
    return results;
  };
}
