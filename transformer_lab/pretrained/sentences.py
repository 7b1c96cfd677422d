"""第 10 章用的句子：代词的两句对照、数“注意力汇点”和“看前一个词的头”的一小组句子、比相似度的十二句。

都是普通的句子，不是为哪个头挑出来的：测量在整组句子上取平均，结论不靠某一句碰巧的结果。
中文的代词句没有用“因为它”：multilingual-e5-small 的词表里“因为它”是**一个**词元，“它”就不单独出现了；
去掉“因为”，“它”才是自己一个词元（这本身就是分词器的一课）。
"""

from __future__ import annotations

__all__ = ["PRONOUN_CASES_EN", "MINIMAL_PAIRS_EN", "PRONOUN_CASES_ZH", "PROBE_EN", "PROBE_ZH", "SIMILARITY_EN", "SIMILARITY_ZH"]

# (句子, 代词实际指的那个词)：第 2 章的那一对，只差最后一个形容词
PRONOUN_CASES_EN = (
    ("The animal didn't cross the street because it was too tired.", "animal"),
    ("The animal didn't cross the street because it was too wide.", "street"),
)
# 再多几组同样的“最小对照”（Winograd 式：Levesque 等 2012 的经典例句，只差一个词，代词的所指就换了一个）。
# 每组：(代词, (两个候选词), ((句子, 实际所指), (句子, 实际所指)))。第一组就是上面那一对。
# 每组的两句在 all-MiniLM-L6-v2 的分词下词元一样多、只差那一个词元，位置一一对上（tests/pretrained 检查）。
MINIMAL_PAIRS_EN = (
    ("it", ("animal", "street"), PRONOUN_CASES_EN),
    ("it", ("trophy", "suitcase"), (
        ("The trophy didn't fit in the suitcase because it was too big.", "trophy"),
        ("The trophy didn't fit in the suitcase because it was too small.", "suitcase"))),
    ("they", ("council", "demonstrators"), (
        ("The city council refused the demonstrators a permit because they feared violence.", "council"),
        ("The city council refused the demonstrators a permit because they advocated violence.", "demonstrators"))),
    ("he", ("man", "son"), (
        ("The man couldn't lift his son because he was so weak.", "man"),
        ("The man couldn't lift his son because he was so heavy.", "son"))),
    ("she", ("joan", "susan"), (
        ("Joan made sure to thank Susan for all the help she had given.", "susan"),
        ("Joan made sure to thank Susan for all the help she had received.", "joan"))),
    ("he", ("paul", "george"), (
        ("Paul tried to call George on the phone, but he wasn't successful.", "paul"),
        ("Paul tried to call George on the phone, but he wasn't available.", "george"))),
)
PRONOUN_CASES_ZH = (
    ("那只动物没有过马路，它太累了。", "动物"),
    ("那只动物没有过马路，它太宽了。", "马路"),
)

# 数注意力汇点 ([CLS]/[SEP]/标点) 和“看前一个/后一个词”的头：几种句式、长短不一
PROBE_EN = (
    "The animal didn't cross the street because it was too tired.",
    "Attention lets every word look at every other word in the sentence.",
    "My sister bought three apples, two pears and a melon at the market.",
    "If it rains tomorrow, we will stay at home and read.",
    "The old library on the hill was closed for repairs last winter.",
    "Can you tell me where the nearest train station is?",
    "Neural networks learn their weights from millions of examples.",
    "She smiled, waved goodbye, and walked out into the snow.",
)
PROBE_ZH = (
    "那只动物没有过马路，它太累了。",
    "注意力机制让每个词都能看到句子里的其他词。",
    "今天天气很好，我们去公园散步吧。",
    "小明把苹果给了小红，因为她饿了。",
    "明天会下雨吗？",
    "机器翻译把中文变成英文。",
)

# 比句向量的相似度：四个话题，每个话题三句（同一话题的句子用词不同、意思相近）
SIMILARITY_EN = (
    "A cat is sleeping on the sofa.",
    "The kitten naps on the couch.",
    "A sleepy cat is lying on the sofa.",
    "It will rain heavily tomorrow.",
    "The forecast says there will be a storm.",
    "The sun is shining and the sky is clear.",
    "I boiled the pasta and added some salt.",
    "She is cooking noodles in the kitchen.",
    "We baked bread for breakfast.",
    "The stock market fell sharply today.",
    "Share prices dropped after the announcement.",
    "The bank raised interest rates again.",
)
SIMILARITY_ZH = (
    "一只猫在沙发上睡觉。",
    "小猫在长椅上打盹。",
    "沙发上躺着一只犯困的猫。",
    "明天会下大雨。",
    "天气预报说有暴风雨。",
    "阳光明媚，天空很晴朗。",
    "我把面条煮好，加了点盐。",
    "她在厨房里做饭。",
    "我们早饭烤了面包。",
    "今天股市大跌。",
    "消息公布后股价下跌了。",
    "银行又加息了。",
)
