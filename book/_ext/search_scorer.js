/* 搜索结果的排序微调：Sphinx 的 html_search_scorer（_config.yml）指向本文件，Sphinx 把它放进 language_data.js。
 * language_data.js 在 searchtools.js 之后加载，所以这里的 Scorer 整个替换 searchtools.js 里的默认对象：
 * 下面的数值照抄 Sphinx 7.4 的默认值（本书不用它们：正文的计分在 zh_search.js，没有 API 对象），只加了 score（和下面的 ALL_WORDS）。
 *
 * 附录页（术语表、自测、延伸阅读、NumPy 速成、记号表）几乎提到每个术语，得分常和讲它的那一章打平；
 * 打平时 Sphinx 按标题的字母序排，附录就会排到讲它的章节前面。把附录页的得分打九折：标题里命中时
 * （“术语表”“学习路线”“自测”）附录仍然领先，只是不再在平局里抢在章节前面。术语表条目的索引结果也一样。
 *
 * 章节之间打平时也按标题的字母序排，“第 10 章”会排在“第 2 章”前面（"1" < "2"）。后面的章（尤其第 9、10 章）
 * 把前面讲过的东西放进真模型里再用一遍，几乎每个术语都提到；打平时应该先给出讲它的那一章，也就是章号小的。
 * 所以每章减去 章号 × 0.01（最多 0.1，远小于任何一项真正的得分差）。
 *
 * 只是把前面的概念重看一遍、不讲新概念的章（章节表 transformer_lab/chapters.py 里 revisits=True 的章，现在是
 * 第 10 章）和附录一样打九折。下面 REVISITING 的空列表是留给它们的位置：建书开始时 zh_search.py 按章节表填上
 * 章号，再把填好的一份交给 Sphinx。所以加一章不用改这个文件；讲新概念的第 11 章也不会在平局里悄悄吃亏。
 *
 * 正文的得分（zh_search.js）分两档：查询的每个词都在这一页的，得分加上 ALL_WORDS，排在只命中一部分的页前面。
 * 上面的打折和减分只在一档之内起作用（打折的是档内的那部分得分），不会把附录从“全部命中”一档挪到下一档。 */
var BACK_MATTER = /^book\/(?!preface$)/;
var CHAPTER = /^notebooks\/(\d+)_/;
var REVISITING = [];
var ALL_WORDS = 1000;

var Scorer = {
  // result = [docname, title, anchor, descr, score, filename]
  score: function (result) {
    var tier = result[4] >= ALL_WORDS ? ALL_WORDS : 0, score = result[4] - tier;
    var chapter = CHAPTER.exec(result[0]);
    if (chapter) {
      var n = parseInt(chapter[1], 10);
      return tier + score * (REVISITING.indexOf(n) >= 0 ? 0.9 : 1) - n * 0.01;
    }
    return tier + (BACK_MATTER.test(result[0]) ? score * 0.9 : score);
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
