/* 本书的中文搜索：查询切分与计分。由 book/_ext/zh_search.py 的 js_splitter_code（Sphinx 给搜索语言的钩子）
 * 放进 language_data.js（在 searchtools.js 之后加载）。附录页降权和“全部词都命中”的档位在 search_scorer.js。
 *
 * 下面两个空列表是留给建书时填的位置（zh_search.py 的 splitter_code，不要手改）：
 *   STOP_WORDS  问句里的虚词（“的”“吗”“什么”“怎么”“为什么”……），一份清单，Python 的索引端也用它；
 *   FRAME_WORDS 问“关于”一个概念的词（“好处”“区别”“原理”“用”）：查询里还有别的词时不用它们；
 *   SYNONYMS    术语表 (book/glossary.md) 和记号表 (book/notation.md) 里的同义说法和讲它的页面：每条是
 *               {names: ["自注意力", "self-attention"], pages: ["notebooks/02_self_attention"]}。
 *
 * 切查询（splitQuery，Sphinx 有文档的钩子）：汉字和其他字母在文字种类变化处分开（“transformer的优点” →
 * transformer | 的优点）。一段汉字里先认出术语表里的词（最长的先认，“多头注意力”不会被拆成“多头”+“注意力”），
 * 再在其余部分删掉 STOP_WORDS，在删掉的地方断开；每一段切成相邻两字（只有一个字时就是这个字）。
 * 于是“的优”“么算”这类跨词的两字块不会出现；索引（zh_search.py）里也没有含“的”“了”“是”等虚字的两字块。
 * 单个拉丁字母（Q、K、V）两边都不要。 */
var HAN_RUN = /\p{Script=Han}+/u;
var QUERY_PART = /(\p{Script=Han}+)|((?:(?!\p{Script=Han})[\p{Letter}\p{Number}_])+)/gu;
var STOP_WORDS = [];
var FRAME_WORDS = [];
var SYNONYMS = [];
var NOT_FOUND = "没找到含有这些词的页面。“什么”“怎么”“为什么”“的”“吗”这类词不参与搜索；" +
  "换成书里的说法（术语表里列着每个术语的中英文名）或少输几个字再试试。";

var bigrams = function (text) {
  var chars = Array.from(text);
  if (chars.length === 1) return chars;
  var out = [];
  for (var i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  return out;
};

var _hanTerms = null;  // 术语表里只由汉字组成的说法，最长的在前（切查询时先认它们）
var _stopPattern = null;

/* 一段汉字 → 词：术语表里的词原样保留，其余部分删掉虚词、在那里断开。 */
var hanWords = function (run) {
  if (_hanTerms === null) {
    _hanTerms = [].concat.apply([], SYNONYMS.map(function (e) { return e.names; })).filter(function (t) { return /^\p{Script=Han}+$/u.test(t); })
      .sort(function (a, b) { return b.length - a.length; });
    var stops = STOP_WORDS.slice().sort(function (a, b) { return b.length - a.length; });
    _stopPattern = stops.length ? new RegExp(stops.join("|"), "gu") : null;
  }
  var pieces = [run], words = [];
  _hanTerms.forEach(function (term) {  // 认出术语：把 run 切成 [普通, 术语, 普通, ...]
    pieces = [].concat.apply([], pieces.map(function (p) {
      if (typeof p !== "string" || p.indexOf(term) === -1) return [p];
      var parts = p.split(term), out = [parts[0]];
      for (var i = 1; i < parts.length; i++) out.push({term: term}, parts[i]);
      return out;
    }));
  });
  pieces.forEach(function (p) {
    if (typeof p !== "string") { words.push(p.term); return; }
    (_stopPattern ? p.split(_stopPattern) : [p]).forEach(function (w) { if (w) words.push(w); });
  });
  return words;
};

var splitQuery = function (query) {
  var words = [];
  for (var m of query.matchAll(QUERY_PART)) {
    if (m[2]) { if (m[2].length > 1) words.push(m[2]); continue; }  // 单个字母不进索引（Q、K、V），也不当查询块
    words.push.apply(words, hanWords(m[1]));
  }
  var content = words.filter(function (w) { return FRAME_WORDS.indexOf(w) === -1; });
  var terms = [];
  (content.length ? content : words).forEach(function (w) {
    if (HAN_RUN.test(w)) terms.push.apply(terms, bigrams(w)); else terms.push(w);
  });
  return terms;
};

/* 查询一个字也没搜到时，搜索页显示的话（Sphinx 自带的译文说“选择了合适的分类”，本书没有分类）：
 * translations.js 在本文件之前加载，这里只改这一条。 */
if (typeof Documentation !== "undefined" && Documentation.TRANSLATIONS) {
  Documentation.TRANSLATIONS["Your search did not match any documents. Please make sure that all words are " +
    "spelled correctly and that you've selected enough categories."] = NOT_FOUND;
}

/* 正文计分：替换 Sphinx 7.x searchtools.js 的 Search.performTermsSearch。它不是文档里的钩子（Sphinx 没有
 * 给“哪些页算命中”留钩子；html_search_scorer 只能给已经命中的页改分），原来的版本要求查询的每一块都出现在
 * 同一页，自然的问句于是一无所获。替换只动这一个函数，输入输出和原来一样；
 * Jupyter Book 1 把 Sphinx 锁在 7.x，升级时 tests/site/test_search.py 和 tests/site/test_extensions.py 会发现它失灵。
 *
 * 查询的“词”：术语表里的一个术语（连同它的同义说法，任何一种说法整个出现都算这一页有这个词）；其余每一块
 * （两字块、单字、拉丁字母的词）各算一个词。书里哪一页都没有的块不算词（“优点”书里没有；“力好”是跨词的噪声）。
 * 列出哪些页：至少有一个词（的一部分）出现在这一页；只要查询里有一个词书里有，结果就不会是空的。
 * 怎么排序：每个词的权重 = log(1 + 页数 / 含这个词的页数)（越少页面用到越重要，即 IDF）；一页的得分 = 命中的
 * 权重之和（术语只出现了一部分时按比例）/ 全部权重，标题里命中再加一遍，术语表（记号表）说讲这个术语的页面
 * 也再加一遍（索引里只有“哪些页有这个词”，没有次数；讲它的是哪一章，书自己写在术语表里）；两字块里的单字另计一半权重
 * （问句和书里的说法只差一两个字时仍能排对：“是谁”/“指谁”）。全部词都命中的页再加 ALL_WORDS（search_scorer.js），
 * 排在只命中一部分的页前面。 */
if (typeof Search !== "undefined") {
  Search.performTermsSearch = function (searchTerms, excludedTerms) {
    var index = Search._index;
    var docCount = index.docnames.length;
    var files = function (table, word) {
      var f = table[word];
      return f === undefined ? [] : (Array.isArray(f) ? f : [f]);
    };
    var lookup = function (table, word) {
      var found = files(table, word);
      if (found.length || HAN_RUN.test(word)) return found;
      // 拉丁字母的词：不计下划线（读者打 “dk”，书里写 “d_k”）；三个字母以上的允许部分匹配
      //（“soft” 找到 “softmax”），与 Sphinx 原来一致
      var partial = new Set(), bare = word.replace(/_/g, "");
      Object.keys(table).forEach(function (term) {
        var t = term.replace(/_/g, "");
        if (t === bare || (bare.length > 2 && t.indexOf(bare) !== -1)) files(table, term).forEach(function (f) { partial.add(f); });
      });
      return Array.from(partial);
    };
    var seen = new Map();  // 块 → {body: 含它的页（正文或标题）, title: 标题里有它的页, idf}
    var term = function (word) {
      if (!seen.has(word)) {
        var title = new Set(lookup(index.titleterms, word));
        var body = new Set(lookup(index.terms, word).concat(Array.from(title)));
        seen.set(word, {body: body, title: title, idf: body.size ? Math.log(1 + docCount / body.size) : 0});
      }
      return seen.get(word);
    };
    var stem = function (phrase) {  // 术语表里的一种说法 → 和查询一样切块、取词干（“self-attention” → self, attent）
      var stemmer = new Stemmer();
      return splitQuery(phrase).filter(function (w) { return stopwords.indexOf(w.toLowerCase()) === -1; })
        .map(function (w) { return stemmer.stemWord(w.toLowerCase()); });
    };

    // 1. 查询 → 词：先认术语（块最多的说法先认，用掉的块不再用），剩下的块各是一个词；书里没有的块不算
    var left = new Set(searchTerms);
    var candidates = [];
    SYNONYMS.forEach(function (entry) {
      var alternatives = entry.names.map(stem).filter(function (a) { return a.length; });
      alternatives.forEach(function (a) { candidates.push({used: a, alternatives: alternatives, pages: entry.pages}); });
    });
    candidates.sort(function (a, b) { return b.used.length - a.used.length; });
    var words = [], homes = [];  // homes[i]：术语表、记号表说讲第 i 个词的页面
    candidates.forEach(function (c) {
      if (c.used.every(function (w) { return left.has(w); })) {
        c.used.forEach(function (w) { left.delete(w); });
        words.push(c.alternatives);
        homes.push(c.pages);
      }
    });
    left.forEach(function (w) { words.push([[w]]); homes.push([]); });
    words = words.map(function (alternatives) {
      return alternatives.map(function (a) { return a.filter(function (w) { return term(w).body.size; }); })
        .filter(function (a) { return a.length; });
    });
    homes = homes.filter(function (_, i) { return words[i].length; });
    words = words.filter(function (alternatives) { return alternatives.length; });

    // 2. 每个词在每一页命中了多少（0..1）：取最好的一种说法，按块的 IDF 加权
    var share = function (alternatives, file, where) {
      var best = 0;
      alternatives.forEach(function (a) {
        var got = 0, all = 0;
        a.forEach(function (w) { var t = term(w); all += t.idf; if (t[where].has(file)) got += t.idf; });
        best = Math.max(best, all ? got / all : 0);
      });
      return best;
    };
    var pages = new Set();
    words.forEach(function (alternatives) {
      alternatives.forEach(function (a) { a.forEach(function (w) { term(w).body.forEach(function (f) { pages.add(f); }); }); });
    });
    var weights = words.map(function (alternatives) {
      var full = 0, some = 0;
      pages.forEach(function (f) { var s = share(alternatives, f, "body"); if (s === 1) full++; if (s > 0) some++; });
      return Math.log(1 + docCount / Math.max(1, full || some));
    });
    // 两字块里的单字（只用来排序）
    var singles = new Set();
    searchTerms.forEach(function (w) {
      if (HAN_RUN.test(w) && w.length === 2) Array.from(w).forEach(function (c) { if (!searchTerms.has(c)) singles.add(c); });
    });
    var total = weights.reduce(function (a, b) { return a + b; }, 0);
    singles.forEach(function (c) { total += 0.5 * term(c).idf; });

    var excluded = new Set();
    excludedTerms.forEach(function (w) {
      files(index.terms, w).concat(files(index.titleterms, w)).forEach(function (f) { excluded.add(f); });
    });
    var results = [];
    pages.forEach(function (file) {
      if (excluded.has(file)) return;
      var score = 0, every = true;
      words.forEach(function (alternatives, i) {
        var s = share(alternatives, file, "body");
        if (s < 1) every = false;
        var home = homes[i].indexOf(index.docnames[file]) >= 0 ? 1 : 0;  // 术语表说“见第 N 章”的那一章
        score += weights[i] * (s + share(alternatives, file, "title") + home);
      });
      singles.forEach(function (c) { var t = term(c); if (t.body.has(file)) score += 0.5 * t.idf * (t.title.has(file) ? 2 : 1); });
      score = Math.round(100 * score / total) + (every ? ALL_WORDS : 0);
      results.push([index.docnames[file], index.titles[file], "", null, score, index.filenames[file]]);
    });
    return results;
  };
}
