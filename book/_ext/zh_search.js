/* 本书的中文搜索：查询切分与计分。由 book/_ext/zh_search.py 的 js_splitter_code（Sphinx 给搜索语言的钩子）
 * 放进 language_data.js（在 searchtools.js 之后加载）。附录页降权和“全部词都命中”的档位在 search_scorer.js。
 *
 * 下面四个空列表是留给建书时填的位置（zh_search.py 的 splitter_code，不要手改）：
 *   STOP_WORDS  问句里的虚词（“的”“吗”“什么”“怎么”“为什么”……），一份清单，Python 的索引端也用其中的虚字；
 *   CONNECTORS  连词（“和”“与”）：夹在两个词中间时删掉，在词里（“饱和”“求和”）时不删；
 *   FRAME_WORDS 问“关于”一个概念的词（“好处”“区别”“原理”“用”）：查询里还有别的词时不用它们；
 *   SYNONYMS    术语表 (book/glossary.md) 和记号表 (book/notation.md) 里的同义说法和讲它的页面：每条是
 *               {names: ["自注意力", "self-attention"], pages: ["notebooks/02_self_attention"]}。
 *
 * 切查询（splitQuery，Sphinx 有文档的钩子）返回查询里的“词”：汉字和其他字母在文字种类变化处分开
 * （“transformer的优点” → transformer | 的优点）；一段汉字里先认出术语表和记号表里的词（最长的先认：“多头注意力”
 * 不会被拆成“多头”+“注意力”），再在其余部分删掉 STOP_WORDS、在删掉的地方断开（“的优点” → “优点”）。
 * 每个汉字的词在索引里查它的相邻两字（只有一个字时就是这个字）：于是“的优”“么算”这类跨词的两字块不会被查；
 * 索引（zh_search.py）里也没有含“的”“了”“是”等虚字的两字块。单个拉丁字母（Q、K、V）两边都不要。 */
var HAN_RUN = /\p{Script=Han}+/u;
var HAN_WORD = /^\p{Script=Han}+$/u;
var LONG = 5;  // 这么多字以上、不认得的一段当作几个词连写（见 performTermsSearch 前的说明）
var QUERY_PART = /(\p{Script=Han}+)|((?:(?!\p{Script=Han})[\p{Letter}\p{Number}_])+)/gu;
var STOP_WORDS = [];
var CONNECTORS = [];
var FRAME_WORDS = [];
var SYNONYMS = [];
var NOT_FOUND = "没找到含有这些词的页面。“什么”“怎么”“为什么”“的”“吗”这类词不参与搜索；" +
  "换成书里的说法（术语表里列着每个术语的中英文名）或少输几个字再试试。";

/* 一个汉字的词在索引里的块：相邻两字；只有一个字时就是这个字。 */
var bigrams = function (text) {
  var chars = Array.from(text);
  if (chars.length === 1) return chars;
  var out = [];
  for (var i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  return out;
};

var _known = null;  // 术语表、记号表里只由汉字组成的说法，最长的在前
var _stopPattern = null, _framePattern = null;
var knownWords = function () {
  if (_known === null) {
    _known = [].concat.apply([], SYNONYMS.map(function (e) { return e.names; }))
      .filter(function (t) { return HAN_WORD.test(t); })
      .sort(function (a, b) { return b.length - a.length; });
    var longestFirst = function (list) { return list.slice().sort(function (a, b) { return b.length - a.length; }); };
    _stopPattern = STOP_WORDS.length ? new RegExp(longestFirst(STOP_WORDS).join("|"), "gu") : null;
    var frames = FRAME_WORDS.filter(function (w) { return w.length > 1; });  // “用”只在单独成段时算
    _framePattern = frames.length ? new RegExp("(" + longestFirst(frames).join("|") + ")", "gu") : null;
  }
  return _known;
};

/* 认出一段文字里的术语（最长的先认）：返回 [普通, 术语, 普通, ...]，空的普通段去掉。 */
var splitKnown = function (text) {
  var pieces = [text];
  knownWords().forEach(function (term) {
    pieces = [].concat.apply([], pieces.map(function (p) {
      if (typeof p !== "string" || p.indexOf(term) === -1) return [p];
      var parts = p.split(term), out = [parts[0]];
      for (var i = 1; i < parts.length; i++) out.push({term: term}, parts[i]);
      return out;
    }));
  });
  return pieces.filter(function (p) { return p !== ""; }).map(function (p) { return typeof p === "string" ? p : p.term; });
};

/* 一段（不含术语和虚词的）汉字里，夹在两个词中间的连词换成空格：它前后各有至少两个字，或者在这一段的头上、
 * 前面还有词（before），在尾上、后面还有词（after）。“交叉注意力和位置编码”“GPT和BERT”里的“和”是连词；
 * “饱和”“总和”里的“和”离这一段的头不到两个字，不动。 */
var betweenWords = function (text, before, after) {
  var chars = Array.from(text);
  return chars.map(function (c, i) {
    var between = (i >= 2 || (i === 0 && before)) && (chars.length - 1 - i >= 2 || (i === chars.length - 1 && after));
    return CONNECTORS.indexOf(c) >= 0 && between ? " " : c;
  }).join("");
};

/* 一段汉字 → 词：先认出术语（“加权求和” → 加权 | 求和：术语里的字不当虚词删），其余部分在虚词处断开，
 * 再删掉夹在词中间的连词，再从“好处”“区别”这类词处断开（“多头注意力好处” → 多头注意力 | 好处，
 * “交叉注意力” → 交叉 | 注意力；原样连着的两个词在排序时另有加分，见 performTermsSearch）。
 * before / after：这一段汉字前面 / 后面还有别的词（拉丁字母的词）。 */
var hanWords = function (run, before, after) {
  var segments = [];  // [文字, 是不是术语]
  splitKnown(run).forEach(function (piece) {
    if (knownWords().indexOf(piece) >= 0) { segments.push([piece, true]); return; }
    (_stopPattern ? piece.split(_stopPattern) : [piece]).forEach(function (s) { if (s) segments.push([s, false]); });
  });
  var words = [];
  segments.forEach(function (segment, j) {
    if (segment[1]) { words.push(segment[0]); return; }
    betweenWords(segment[0], j > 0 || before, j + 1 < segments.length || after).split(" ").forEach(function (part) {
      (_framePattern ? part.split(_framePattern) : [part]).forEach(function (w) { if (w) words.push(w); });
    });
  });
  return words;
};

var splitQuery = function (query) {
  var words = [];
  var parts = Array.from(query.matchAll(QUERY_PART));
  parts.forEach(function (m, i) {
    if (m[2]) { if (m[2].length > 1) words.push(m[2]); return; }  // 单个字母不进索引（Q、K、V），也不当查询的词
    words.push.apply(words, hanWords(m[1], i > 0, i + 1 < parts.length));
  });
  var content = words.filter(function (w) { return FRAME_WORDS.indexOf(w) === -1; });
  return content.length ? content : words;
};

/* 查询一个词也没搜到时，搜索页显示的话（Sphinx 自带的译文说“选择了合适的分类”，本书没有分类）：
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
 * 一页有没有查询里的一个词：
 *   拉丁字母的词：索引里有它（不计下划线：“dk” 找到 “d_k”；三个字母以上也认部分匹配：“soft” 找到 “softmax”，
 *     “layer” 找到 “LayerNorm”）。
 *   汉字的词：它的每个两字块都在这一页（书里原样有这个词：“权重矩阵”）。
 *   LONG 个字以上的一段（“越大越相似”），或书里哪一页也没有原样写出的四个字以上的一段（“温度采样”），多半是
 *     几个词连写，不知道边界在哪：这一页能用自己有的两字块把它铺满就算（“越大|越|相似”，单字最多一个、只在
 *     字数是奇数时），不要求“大越”“度采”这种跨词的块；书里没有的块（“全然无关”的“全然”）铺不上。
 *   同义词：术语的任何一种说法在这一页都算（“自注意力”找到只写 self-attention 的页）。
 *   书里哪一页都没有的词不算（“优点”书里没有）。
 * 列出哪些页：至少有一个词（的一部分）出现在这一页；只要查询里有一个词书里有，结果就不会是空的。
 * 怎么排序：每个词的权重 = log(1 + 页数 / 含这个词的页数)（越少页面用到越重要，即 IDF）；一页的得分 = 它有的
 * 词的权重之和（只有一部分两字块时按比例）/ 全部权重；标题里有再加一遍，术语表（记号表）说讲这个术语的页面
 * 也再加一遍（索引里只有“哪些页有这个块”，没有次数；讲它的是哪一章，书自己写在术语表里）；查询里相邻的两个
 * 词在这一页原样连着（“交叉注意力”，不只是“交叉熵”和“注意力”；“layer norm” → LayerNorm）也加它的权重。
 * 查询的每个词都在的页再加 ALL_WORDS（search_scorer.js），排在只有一部分词的页前面（书里没有一页整个有的词
 * 不在这个要求里：没有哪一页能满足它）。 */
if (typeof Search !== "undefined") {
  Search.performTermsSearch = function (searchTerms, excludedTerms) {
    var index = Search._index;
    var docCount = index.docnames.length;
    var own = Object.prototype.hasOwnProperty;
    var files = function (table, word) {  // 只认索引自己的词条：“constructor”“__proto__”“toString”不是继承来的属性
      if (!own.call(table, word)) return [];
      var f = table[word];
      return Array.isArray(f) ? f : [f];
    };
    var lookup = function (table, word) {
      var found = files(table, word);
      if (HAN_RUN.test(word)) return found;
      var partial = new Set(found), bare = word.replace(/_/g, "");
      Object.keys(table).forEach(function (term) {
        var t = term.replace(/_/g, "");
        if (t === bare || (bare.length > 2 && t.indexOf(bare) !== -1)) files(table, term).forEach(function (f) { partial.add(f); });
      });
      return Array.from(partial);
    };
    var blocks = new Map();  // 索引里的一块 → {body: 含它的页（正文或标题）, title: 标题里有它的页, idf}
    var block = function (b) {
      if (!blocks.has(b)) {
        var title = new Set(lookup(index.titleterms, b));
        var body = new Set(lookup(index.terms, b).concat(Array.from(title)));
        blocks.set(b, {body: body, title: title, idf: body.size ? Math.log(1 + docCount / body.size) : 0});
      }
      return blocks.get(b);
    };

    var tiles = function (chars, file, where) {  // 用这一页有的两字块铺满一段字，最少要几个单字
      var best = [0];
      for (var i = 1; i <= chars.length; i++) {
        best[i] = best[i - 1] + (block(chars[i - 1])[where].has(file) ? 1 : Infinity);
        if (i > 1 && block(chars[i - 2] + chars[i - 1])[where].has(file)) best[i] = Math.min(best[i], best[i - 2]);
      }
      return best[chars.length];
    };
    /* 一个词在一页（where = "body" 或 "title"）有多少：1 = 有；否则是它的两字块按 IDF 加权有了几成。 */
    var share = function (word, file, where, verbatim) {
      if (!HAN_WORD.test(word)) {  // verbatim：只认索引里原样的这个词（“layernorm”，不认部分匹配的 “self_attention”）
        if (verbatim) {
          var exact = files(index.titleterms, word).concat(where === "title" ? [] : files(index.terms, word));
          return exact.indexOf(file) >= 0 ? 1 : 0;
        }
        return block(word)[where].has(file) ? 1 : 0;
      }
      var parts = bigrams(word), got = 0, all = 0;
      parts.forEach(function (b) {  // 书里没有的块（“全然”）当作最少见的块：它缺了，这个词就不算整个在
        var t = block(b), idf = t.body.size ? t.idf : Math.log(1 + docCount);
        all += idf;
        if (t[where].has(file)) got += idf;
      });
      if (got === all) return 1;
      var chars = Array.from(word);
      if (!verbatim && (chars.length >= LONG || (chars.length >= 4 && !inBook(word))) &&
          tiles(chars, file, where) <= chars.length % 2) return 1;
      return got / all;
    };
    var verbatimSomewhere = new Map();
    var inBook = function (word) {  // 书里有没有一页原样有这个词（每个两字块都在）
      if (!verbatimSomewhere.has(word)) {
        var common = null;
        bigrams(word).forEach(function (b) {
          var body = block(b).body;
          common = common === null ? new Set(body) : new Set(Array.from(common).filter(function (f) { return body.has(f); }));
        });
        verbatimSomewhere.set(word, common !== null && common.size > 0);
      }
      return verbatimSomewhere.get(word);
    };
    var stem = function (name) {  // 术语的一种说法 → 和查询一样切词、取词干（“self-attention” → self, attent）
      var stemmer = new Stemmer();
      return splitQuery(name).filter(function (w) { return stopwords.indexOf(w.toLowerCase()) === -1; })
        .map(function (w) { return stemmer.stemWord(w.toLowerCase()); });
    };

    // 1. 查询的词 → 概念：先认术语（词最多的说法先认，用掉的词不再用），剩下的词各是一个概念
    var left = new Set(searchTerms), candidates = [], concepts = [];
    SYNONYMS.forEach(function (entry) {
      var alternatives = entry.names.map(stem).filter(function (a) { return a.length; });
      alternatives.forEach(function (a) { candidates.push({used: a, alternatives: alternatives, pages: entry.pages}); });
    });
    candidates.sort(function (a, b) { return b.used.length - a.used.length; });
    candidates.forEach(function (c) {
      if (c.used.every(function (w) { return left.has(w); })) {
        c.used.forEach(function (w) { left.delete(w); });
        concepts.push({alternatives: c.alternatives, homes: c.pages});
      }
    });
    left.forEach(function (w) { concepts.push({alternatives: [[w]], homes: []}); });

    // 2. 一个概念在一页有多少：最好的一种说法里，各个词有的比例的平均
    var has = function (concept, file, where, exact) {  // exact：汉字词只认原样的（不用两字块拼）
      var best = 0;
      concept.alternatives.forEach(function (a) {
        best = Math.max(best, a.reduce(function (s, w) {
          return s + share(w, file, where, exact && HAN_WORD.test(w));
        }, 0) / a.length);
      });
      return best;
    };
    var pages = new Set();
    concepts.forEach(function (c) {
      c.alternatives.forEach(function (a) { a.forEach(function (w) {
        (HAN_WORD.test(w) ? bigrams(w) : [w]).forEach(function (b) { block(b).body.forEach(function (f) { pages.add(f); }); });
      }); });
    });
    concepts.forEach(function (c) {  // 书里哪一页都没有的概念不算；权重 = IDF
      // IDF 数的是原样有这个词的页：“交叉注意力”只有第 8 章原样写着，有“交叉熵”和“注意力”的页不能把它拉成常见词
      var full = 0, some = 0, verbatim = 0;
      pages.forEach(function (f) {
        var s = has(c, f, "body");
        if (s === 1) full++;
        if (s > 0) some++;
        if (s === 1 && has(c, f, "body", true) === 1) verbatim++;
      });
      c.weight = some ? Math.log(1 + docCount / (verbatim || full || some)) : 0;
      c.somewhere = full > 0;  // 没有一页整个有它的词（“全然无关”）不要求“每个词都在”
    });
    concepts = concepts.filter(function (c) { return c.weight > 0; });
    // 查询里相邻的两个词在书里原样连在一起（“交叉”+“注意力”、“layer”+“norm” → LayerNorm）：只用来排序，
    // 不算进“每个词都在”
    var order = Array.from(searchTerms), phrases = [];
    for (var i = 0; i + 1 < order.length; i++) {
      if (HAN_WORD.test(order[i]) !== HAN_WORD.test(order[i + 1])) continue;
      var phrase = order[i] + order[i + 1], found = 0;
      pages.forEach(function (f) { if (share(phrase, f, "body", true) === 1) found++; });
      if (found) phrases.push({text: phrase, weight: Math.log(1 + docCount / found)});
    }
    var total = concepts.concat(phrases).reduce(function (s, c) { return s + c.weight; }, 0);

    var excluded = new Set();
    excludedTerms.forEach(function (w) {
      files(index.terms, w).concat(files(index.titleterms, w)).forEach(function (f) { excluded.add(f); });
    });
    var results = [], anywhere = concepts.some(function (c) { return c.somewhere; });
    pages.forEach(function (file) {
      if (excluded.has(file)) return;
      var score = 0, every = anywhere;
      concepts.forEach(function (c) {
        var s = has(c, file, "body");
        if (s < 1 && c.somewhere) every = false;
        var home = c.homes.indexOf(index.docnames[file]) >= 0 ? 1 : 0;  // 术语表说“见第 N 章”的那一章
        score += c.weight * (s + has(c, file, "title") + home);
      });
      if (score <= 0) return;
      phrases.forEach(function (p) {  // 原样连着的两个词：正文里有加一遍，标题里也有再加一遍
        if (share(p.text, file, "body", true) === 1) score += p.weight * (1 + share(p.text, file, "title", true));
      });
      score = Math.round(100 * score / total) + (every ? ALL_WORDS : 0);
      results.push([index.docnames[file], index.titles[file], "", null, score, index.filenames[file]]);
    });
    return results;
  };
}
