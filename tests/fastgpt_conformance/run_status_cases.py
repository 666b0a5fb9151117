"""FastGPT's run/skip/wait test cases, restated as data (no TypeScript copied).

Each scenario names FastGPT's file and commit; each step names FastGPT's test (``it``) and lists the
edge statuses it sets — statuses carry over from one step to the next, as in FastGPT, where the
steps of one ``describe`` mutate the same edge list — and the status expected for each node checked.

Notation: nodes ``"id"`` (a ``chatNode``) or ``"id:flowNodeType"``; edges ``"source>target"`` with an
optional ``@sourceHandle`` (default ``{source}-source-right``); step statuses map an edge (without
its handle) to ``a`` (active), ``w`` (waiting) or ``s`` (skipped).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BASE = "packages/service/test/core/workflow/dispatch/checkNodeRunStatus/base.test.ts"
BASE_COMMIT = "1e8bb154a32852b6cadd00a18dc01fbf1817bef5"
SAFE = "packages/service/test/core/workflow/dispatch/checkNodeRunStatus/safe.test.ts"
SAFE_COMMIT = "a7df557a4daa57bfbd81fc6c488135d10c95b483"
TOOLCALL = "packages/service/test/core/workflow/dispatch/checkNodeRunStatus/toolcall.test.ts"
TOOLCALL_COMMIT = "964df489aed55a77c12dc4837e72d0285c421d53"
# The older single file: scenarios 1-20 as in the three files above, plus the edge cases 21-23 below.
OLD = "test/cases/global/core/workflow/dispatch/checkNodeRunStatus.test.ts"
OLD_COMMIT = "86beea58dc925550cd58482681ae7287a5d3b6c3"


@dataclass(frozen=True)
class Step:
    test: str  # FastGPT's ``it`` name
    set: dict[str, str]
    expect: dict[str, str]


@dataclass(frozen=True)
class Scenario:
    file: str
    commit: str
    describe: str  # FastGPT's ``describe`` name
    nodes: tuple[str, ...]
    edges: tuple[str, ...]
    steps: tuple[Step, ...]
    # (FastGPT's ``it`` name, node, number of groups, sizes of the groups in order or None)
    group_counts: tuple[tuple[str, str, int, tuple[int, ...] | None], ...] = field(default=())


S = "start:workflowStart"
IF = "ifElseNode"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景1: 简单分支汇聚",
        (S, f"A:{IF}", "B", "C", "D"),
        ("start>A", "A>B@A-source-if", "A>C@A-source-else", "B>D", "C>D"),
        (
            Step(
                "场景1.1: A 走 if 分支，D 应该运行",
                {"start>A": "a", "A>B": "a", "A>C": "s", "B>D": "a", "C>D": "s"},
                {"D": "run"},
            ),
            Step(
                "场景1.2: A 走 else 分支，D 应该运行",
                {"start>A": "a", "A>B": "s", "A>C": "a", "B>D": "s", "C>D": "a"},
                {"D": "run"},
            ),
            Step(
                "场景1.3: B 还在执行中，D 应该等待",
                {"start>A": "a", "A>B": "a", "A>C": "s", "B>D": "w", "C>D": "s"},
                {"D": "wait"},
            ),
        ),
        # FastGPT's test name says two groups; its assertion (the behaviour) is one: D is on no loop
        (("D 节点应该分成 2 组", "D", 1, None),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景2: 简单循环",
        (S, "A", "B", "C"),
        ("start>A", "A>B", "B>C", "C>A"),
        (
            Step("场景2.1: 第一次执行，A 应该运行", {"start>A": "a", "C>A": "w"}, {"A": "run"}),
            Step("场景2.2: 循环执行，A 应该运行", {"start>A": "s", "C>A": "a"}, {"A": "run"}),
            Step("场景2.3: 两条边都 waiting，A 应该等待", {"start>A": "w", "C>A": "w"}, {"A": "wait"}),
        ),
        (("A 节点应该分成 2 组", "A", 2, None),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景3: 分支 + 循环",
        (S, f"A:{IF}", "B", "C", "D", "F"),
        ("start>A", "A>B@A-source-if", "A>C@A-source-else", "B>D", "C>D", "D>F", "F>A"),
        (
            Step("场景3.1: 第一次走 if 分支，D 应该运行", {"B>D": "a", "C>D": "s"}, {"D": "run"}),
            Step("场景3.2: 第一次走 else 分支，D 应该运行", {"B>D": "s", "C>D": "a"}, {"D": "run"}),
            Step("场景3.3: 循环回来，A 应该运行", {"start>A": "s", "F>A": "a"}, {"A": "run"}),
        ),
        (("D 节点应该分成 2 组", "D", 2, None), ("A 节点应该分成 2 组", "A", 2, None)),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景4: 并行汇聚（无分支节点）",
        (S, "A", "B", "C"),
        ("start>A", "start>B", "A>C", "B>C"),
        (
            Step("场景4.1: A 和 B 都完成，C 应该运行", {"A>C": "a", "B>C": "a"}, {"C": "run"}),
            Step("场景4.2: 只有 A 完成，C 应该等待", {"A>C": "a", "B>C": "w"}, {"C": "wait"}),
            Step("场景4.3: 只有 B 完成，C 应该等待", {"A>C": "w", "B>C": "a"}, {"C": "wait"}),
        ),
        (("C 节点应该只有 1 组", "C", 1, (2,)),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景5: 所有边都 skipped",
        (S, f"A:{IF}", "B", "C", "D"),
        ("start>A", "A>B@A-source-if", "A>C@A-source-else", "B>D", "C>D"),
        (Step("所有边都 skipped，D 应该被跳过", {"B>D": "s", "C>D": "s"}, {"D": "skip"}),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景6: 多层分支嵌套",
        (S, f"A:{IF}", f"B:{IF}", "C", "D", "E", "F"),
        (
            "start>A",
            "A>B@A-source-if",
            "A>C@A-source-else",
            "B>D@B-source-if",
            "B>E@B-source-else",
            "C>F",
            "D>F",
            "E>F",
        ),
        (
            Step("场景6.1: A→if, B→if 路径，F 应该运行", {"C>F": "s", "D>F": "a", "E>F": "s"}, {"F": "run"}),
            Step(
                "场景6.2: A→if, B→else 路径，F 应该运行", {"C>F": "s", "D>F": "s", "E>F": "a"}, {"F": "run"}
            ),
            Step("场景6.3: A→else 路径，F 应该运行", {"C>F": "a", "D>F": "s", "E>F": "s"}, {"F": "run"}),
            Step("场景6.4: D 还在执行中，F 应该等待", {"C>F": "s", "D>F": "w", "E>F": "s"}, {"F": "wait"}),
        ),
        (("F 节点应该有 1 组（3条边）", "F", 1, (3,)),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景7: 嵌套循环",
        (S, "A", "B", "C", "D"),
        ("start>A", "A>B", "B>C", "C>B", "C>D", "D>A"),
        (
            Step("场景7.1: 第一次执行，A 应该运行", {"start>A": "a", "D>A": "w"}, {"A": "run"}),
            Step("场景7.2: 内层循环执行，B 应该运行", {"A>B": "s", "C>B": "a"}, {"B": "run"}),
            Step("场景7.3: 外层循环执行，A 应该运行", {"start>A": "s", "D>A": "a"}, {"A": "run"}),
            Step("场景7.4: B 的两条边都 waiting，B 应该等待", {"A>B": "w", "C>B": "w"}, {"B": "wait"}),
        ),
        (("A 节点应该分成 2 组", "A", 2, None), ("B 节点应该分成 2 组", "B", 2, None)),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景8: 多个独立循环汇聚",
        (S, "A", "B", "C", "D", "E"),
        ("start>A", "A>B", "B>A", "A>C", "C>D", "D>C", "B>E", "D>E"),
        (
            Step("场景8.1: 两个循环都完成，E 应该运行", {"B>E": "a", "D>E": "a"}, {"E": "run"}),
            Step("场景8.2: 只有循环1完成，E 应该等待", {"B>E": "a", "D>E": "w"}, {"E": "wait"}),
            Step("场景8.3: 只有循环2完成，E 应该等待", {"B>E": "w", "D>E": "a"}, {"E": "wait"}),
        ),
        (("E 节点应该有 1 组（2条边）", "E", 1, (2,)),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景9: 复杂有向有环图（多入口多循环）",
        (S, "A", "B", "C", "D", "E"),
        ("start>A", "start>B", "A>C", "B>C", "C>D", "D>E", "E>C", "E>A"),
        (
            Step("场景9.1: 第一次执行，A 应该运行", {"start>A": "a", "E>A": "w"}, {"A": "run"}),
            Step("场景9.2: 循环到 A，A 应该运行", {"start>A": "s", "E>A": "a"}, {"A": "run"}),
            Step(
                "场景9.3: C 的非循环边都完成，C 应该运行", {"A>C": "a", "B>C": "a", "E>C": "s"}, {"C": "run"}
            ),
            Step("场景9.4: C 的循环边完成，C 应该运行", {"A>C": "s", "B>C": "s", "E>C": "a"}, {"C": "run"}),
            Step(
                "场景9.5: C 的非循环边部分 waiting，C 应该等待",
                {"A>C": "a", "B>C": "w", "E>C": "s"},
                {"C": "wait"},
            ),
        ),
        (("A 节点应该分成 2 组", "A", 2, None), ("C 节点应该分成 2 组", "C", 2, (2, 1))),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景10: 自循环节点",
        (S, "A"),
        ("start>A", "A>A"),
        (
            Step("场景10.1: 第一次执行，A 应该运行", {"start>A": "a", "A>A": "w"}, {"A": "run"}),
            Step("场景10.2: 自循环执行，A 应该运行", {"start>A": "s", "A>A": "a"}, {"A": "run"}),
            Step("场景10.3: 两条边都 waiting，A 应该等待", {"start>A": "w", "A>A": "w"}, {"A": "wait"}),
        ),
        (("A 节点应该分成 2 组", "A", 2, None),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景11: 用户工作流 - 多层循环回退",
        (S, "reply11:answerNode", "reply22:answerNode", "userSelect:userSelect", "replyEnd:answerNode"),
        (
            "start>reply11",
            "reply11>reply22",
            "reply22>userSelect",
            "userSelect>replyEnd@option1",
            "userSelect>reply22@option2",
            "userSelect>reply11@option3",
        ),
        (
            Step(
                "场景11.1: 第一次执行，reply11 完成后 reply22 应该运行",
                {"reply11>reply22": "a", "userSelect>reply22": "w"},
                {"reply22": "run"},
            ),
            Step(
                '场景11.2: 用户选择"回到22"，reply22 应该运行',
                {"reply11>reply22": "s", "userSelect>reply22": "a"},
                {"reply22": "run"},
            ),
            Step(
                "场景11.3: 循环边 active 但非循环边 waiting，应该运行",
                {"reply11>reply22": "w", "userSelect>reply22": "a"},
                {"reply22": "run"},
            ),
        ),
        # FastGPT asserts "at least one group"; the current rule makes two (forward + loop-back)
        (("reply22 节点分组", "reply22", 2, None),),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景12: 复杂分支与循环混合",
        (S, f"A:{IF}", "B", f"C:{IF}", "D", "E", "F"),
        (
            "start>A",
            "A>B@A-source-if",
            "A>C@A-source-else",
            "B>D",
            "C>D@C-source-if",
            "C>E@C-source-else",
            "D>F",
            "E>F",
            "F>A",
        ),
        (
            Step("场景12.1: A→if 路径，B→D active，D 应该运行", {"B>D": "a", "C>D": "s"}, {"D": "run"}),
            Step(
                "场景12.2: A→else, C→if 路径，C→D active，D 应该运行", {"B>D": "s", "C>D": "a"}, {"D": "run"}
            ),
            Step("场景12.3: D 完成后，D→F active，F 应该运行", {"D>F": "a", "E>F": "s"}, {"F": "run"}),
            Step("场景12.4: 循环回来，F→A active，A 应该运行", {"start>A": "s", "F>A": "a"}, {"A": "run"}),
            Step("场景12.5: D 的两条边都 waiting，D 应该等待", {"B>D": "w", "C>D": "w"}, {"D": "wait"}),
        ),
        (("D 节点应该分成 2 组", "D", 2, None), ("F 节点应该分成 2 组", "F", 2, None)),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景13: 多层嵌套循环退出",
        (S, f"A:{IF}", f"B:{IF}", f"C:{IF}", "D", "E", "F", "G"),
        (
            "start>A",
            "A>B@A-source-if",
            "A>G@A-source-else",
            "B>C@B-source-if",
            "B>F@B-source-else",
            "C>D@C-source-if",
            "C>E@C-source-else",
            "D>C",
            "E>B",
            "F>A",
        ),
        (
            Step("场景13.1: 第一次执行，A 应该运行", {"start>A": "a", "F>A": "w"}, {"A": "run"}),
            Step("场景13.2: 内层循环1，D→C active，C 应该运行", {"B>C": "s", "D>C": "a"}, {"C": "run"}),
            Step("场景13.3: 中层循环2，E→B active，B 应该运行", {"A>B": "s", "E>B": "a"}, {"B": "run"}),
            Step("场景13.4: 外层循环3，F→A active，A 应该运行", {"start>A": "s", "F>A": "a"}, {"A": "run"}),
            Step("场景13.5: 退出路径，A→G active，G 应该运行", {"A>G": "a"}, {"G": "run"}),
        ),
        (
            ("A 节点应该分成 2 组", "A", 2, None),
            ("B 节点应该分成 2 组", "B", 2, None),
            ("C 节点应该分成 2 组", "C", 2, None),
        ),
    ),
    Scenario(
        BASE,
        BASE_COMMIT,
        "场景14: 极度复杂多分支多循环交叉",
        (S, f"A:{IF}", "B", f"C:{IF}", "D", "E", "F", "G"),
        (
            "start>A",
            "A>B@A-source-if",
            "A>C@A-source-else",
            "B>D",
            "C>D@C-source-if",
            "C>E@C-source-else",
            "D>F",
            "E>F",
            "F>G",
            "G>A",
            "G>C",
            "D>E",
        ),
        (
            Step("场景14.1: 第一次执行，A 应该运行", {"start>A": "a", "G>A": "w"}, {"A": "run"}),
            Step("场景14.2: A→if 路径，B→D active，D 应该运行", {"B>D": "a", "C>D": "s"}, {"D": "run"}),
            Step(
                "场景14.3: A→else, C→if 路径，C→D active，D 应该运行", {"B>D": "s", "C>D": "a"}, {"D": "run"}
            ),
            Step("场景14.4: 交叉路径，D→E active，E 应该运行", {"C>E": "s", "D>E": "a"}, {"E": "run"}),
            Step(
                "场景14.5: F 汇聚，D→F 和 E→F 都 active，F 应该运行", {"D>F": "a", "E>F": "a"}, {"F": "run"}
            ),
            Step("场景14.6: 循环回来，G→A active，A 应该运行", {"start>A": "s", "G>A": "a"}, {"A": "run"}),
        ),
        (
            ("A 节点应该分成 2 组", "A", 2, None),
            ("C 节点应该分成 2 组", "C", 2, None),
            ("E 节点应该分成 2 组", "E", 2, None),
        ),
    ),
    # ---------------------------------------------------------------- safe.test.ts (no dead loops)
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "死循环避免 > 场景DA-1: 两节点互等死锁（基础互锁）",
        (S, "A", "B"),
        ("start>A", "A>B", "B>A"),
        (
            Step(
                "DA-1.2: 全部 waiting - A 应等待，不触发死循环", {"start>A": "w", "B>A": "w"}, {"A": "wait"}
            ),
            Step("DA-1.3: 全部 waiting - B 应等待，不触发死循环", {"A>B": "w"}, {"B": "wait"}),
            Step("DA-1.4: 仅前向边 active - A 首次触发应运行", {"start>A": "a", "B>A": "w"}, {"A": "run"}),
            Step("DA-1.5: 仅回边 active - A 循环触发应运行", {"start>A": "s", "B>A": "a"}, {"A": "run"}),
            Step(
                "DA-1.6: 两组边都 skipped - A 应跳过（循环已完全退出）",
                {"start>A": "s", "B>A": "s"},
                {"A": "skip"},
            ),
        ),
        (("DA-1.1: 分组正确 - A 应有 2 组（前向组 + 回边组）", "A", 2, None),),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-2: 回边激活时 waiting 的前向组不阻塞执行",
        (S, "X", "A", "B"),
        ("start>A", "X>A", "A>B", "B>A"),
        (
            Step(
                "DA-2.1: 回边 active，前向组有 waiting - A 应运行（回边组独立判断）",
                {"start>A": "s", "X>A": "w", "B>A": "a"},
                {"A": "run"},
            ),
            Step(
                "DA-2.2: 前向组全部 active，回边 waiting - A 应运行（前向组满足）",
                {"start>A": "a", "X>A": "a", "B>A": "w"},
                {"A": "run"},
            ),
            Step(
                "DA-2.3: 前向组一条 active 一条 waiting，回边也 waiting - A 应等待",
                {"start>A": "a", "X>A": "w", "B>A": "w"},
                {"A": "wait"},
            ),
        ),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-3: 三节点环形互等（全等待不触发）",
        (S, "A", "B", "C"),
        ("start>A", "A>B", "B>C", "C>A"),
        (
            Step(
                "DA-3.1: 所有边 waiting - A、B、C 均不运行",
                {"start>A": "w", "A>B": "w", "B>C": "w", "C>A": "w"},
                {"A": "wait", "B": "wait", "C": "wait"},
            ),
            Step(
                "DA-3.2: 循环运行中状态重置后（start→A skipped，C→A waiting）- A 应等待而非重复运行",
                {"start>A": "s", "C>A": "w"},
                {"A": "wait"},
            ),
            Step(
                "DA-3.3: 循环全部退出（所有边 skipped）- A 应跳过",
                {"start>A": "s", "C>A": "s"},
                {"A": "skip"},
            ),
        ),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-4: 分支节点在循环中 - 错误分支不触发循环",
        (S, f"ifElse:{IF}", "loopBody", "exit"),
        (
            "start>ifElse",
            "ifElse>loopBody@ifElse-source-if",
            "ifElse>exit@ifElse-source-else",
            "loopBody>ifElse",
        ),
        (
            Step(
                "DA-4.1: 初始进入 - start→ifElse active，ifElse 应运行",
                {"start>ifElse": "a", "loopBody>ifElse": "w"},
                {"ifElse": "run"},
            ),
            Step(
                "DA-4.2: 循环回来 - loopBody→ifElse active，start→ifElse skipped，ifElse 应运行",
                {"start>ifElse": "s", "loopBody>ifElse": "a"},
                {"ifElse": "run"},
            ),
            Step(
                "DA-4.3: 走 else 分支退出后 - 两组均 skipped，ifElse 应跳过（不再触发循环）",
                {"start>ifElse": "s", "loopBody>ifElse": "s"},
                {"ifElse": "skip"},
            ),
            Step(
                "DA-4.4: 两组均 waiting - ifElse 应等待，不假触发",
                {"start>ifElse": "w", "loopBody>ifElse": "w"},
                {"ifElse": "wait"},
            ),
        ),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-5: 多个独立回边（来自不同分支）- 各组独立判断不互相阻塞",
        (S, "A", f"ifElse:{IF}", "B", "C"),
        ("start>A", "A>ifElse", "ifElse>B@ifElse-source-if", "ifElse>C@ifElse-source-else", "B>A", "C>A"),
        (
            Step(
                "DA-5.2: 所有入边 waiting - A 应等待", {"start>A": "w", "B>A": "w", "C>A": "w"}, {"A": "wait"}
            ),
            Step(
                "DA-5.3: 仅 if 分支回边 active - A 应运行（if 回边组独立触发）",
                {"start>A": "s", "B>A": "a", "C>A": "w"},
                {"A": "run"},
            ),
            Step(
                "DA-5.4: 仅 else 分支回边 active - A 应运行（else 回边组独立触发）",
                {"start>A": "s", "B>A": "w", "C>A": "a"},
                {"A": "run"},
            ),
            Step(
                "DA-5.5: 所有回边 skipped，前向边也 skipped - A 应跳过",
                {"start>A": "s", "B>A": "s", "C>A": "s"},
                {"A": "skip"},
            ),
        ),
        (("DA-5.1: A 应有 3 组（前向组 + if 回边组 + else 回边组）", "A", 3, None),),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-6: 自循环节点不假触发",
        (S, "A"),
        ("start>A", "A>A"),
        (
            Step(
                "DA-6.1: 两条入边均 waiting - A 应等待，不假触发", {"start>A": "w", "A>A": "w"}, {"A": "wait"}
            ),
            Step(
                "DA-6.2: start→A active，A→A waiting - A 首次应运行",
                {"start>A": "a", "A>A": "w"},
                {"A": "run"},
            ),
            Step(
                "DA-6.3: A→A active（自循环激活），start→A skipped - A 应运行",
                {"start>A": "s", "A>A": "a"},
                {"A": "run"},
            ),
            Step(
                "DA-6.4: 两条边均 skipped - A 应跳过（自循环已结束）",
                {"start>A": "s", "A>A": "s"},
                {"A": "skip"},
            ),
        ),
    ),
    Scenario(
        SAFE,
        SAFE_COMMIT,
        "场景DA-7: 循环入边重置后不重复触发",
        (S, "A", "B", "C"),
        ("start>A", "A>B", "B>C", "C>A"),
        (
            Step(
                "DA-7.1: A 运行后入边重置（start→A=skipped, C→A=waiting）- A 应等待",
                {"start>A": "s", "C>A": "w"},
                {"A": "wait"},
            ),
            Step(
                "DA-7.2: B 运行后入边重置（A→B=waiting）- B 应等待，不重复运行", {"A>B": "w"}, {"B": "wait"}
            ),
            Step(
                "DA-7.3: C→A active（循环驱动）- A 应能再次运行", {"start>A": "s", "C>A": "a"}, {"A": "run"}
            ),
        ),
    ),
    # ---------------------------------------------------------------- toolcall.test.ts
    # These edges carry the handle "Agent-source-selectedTools", not the bare "selectedTools" that
    # marks a tool attachment, so they are ordinary control edges here, as in FastGPT's test.
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景15: 工具调用 - 单工具场景",
        (S, "Agent:toolCall", "Tool1:httpRequest468", "End"),
        (
            "start>Agent",
            "Agent>Tool1@Agent-source-selectedTools",
            "Agent>End@Agent-source-right",
            "Tool1>End",
        ),
        (
            Step(
                "Agent调用Tool1: Tool1应该运行",
                {"Agent>Tool1": "a", "Agent>End": "w", "Tool1>End": "w"},
                {"Tool1": "run", "End": "wait"},
            ),
            Step(
                "Agent不调用工具: End应该运行",
                {"Agent>Tool1": "s", "Agent>End": "a", "Tool1>End": "s"},
                {"Tool1": "skip", "End": "run"},
            ),
            Step(
                "Tool1执行完成: End应该运行",
                {"Agent>Tool1": "a", "Agent>End": "a", "Tool1>End": "a"},
                {"End": "run"},
            ),
        ),
    ),
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景16: 工具调用 - 多工具并行场景",
        (S, "Agent:toolCall", "Tool1:httpRequest468", "Tool2:httpRequest468", "Tool3:httpRequest468", "End"),
        (
            "start>Agent",
            "Agent>Tool1@Agent-source-selectedTools",
            "Agent>Tool2@Agent-source-selectedTools",
            "Agent>Tool3@Agent-source-selectedTools",
            "Agent>End@Agent-source-right",
            "Tool1>End",
            "Tool2>End",
            "Tool3>End",
        ),
        (
            Step(
                "Agent调用所有工具: 所有Tool都应该运行",
                {"Agent>Tool1": "a", "Agent>Tool2": "a", "Agent>Tool3": "a", "Agent>End": "w"},
                {"Tool1": "run", "Tool2": "run", "Tool3": "run", "End": "wait"},
            ),
            Step(
                "Agent只调用Tool1和Tool3: Tool1和Tool3运行，Tool2跳过",
                {
                    "Agent>Tool1": "a",
                    "Agent>Tool2": "s",
                    "Agent>Tool3": "a",
                    "Agent>End": "w",
                    "Tool2>End": "s",
                },
                {"Tool1": "run", "Tool2": "skip", "Tool3": "run"},
            ),
            Step(
                "所有工具执行完成: End应该运行",
                {
                    "Agent>Tool1": "a",
                    "Agent>Tool2": "a",
                    "Agent>Tool3": "a",
                    "Agent>End": "a",
                    "Tool1>End": "a",
                    "Tool2>End": "a",
                    "Tool3>End": "a",
                },
                {"End": "run"},
            ),
        ),
    ),
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景17: 工具调用 - 嵌套工具调用场景",
        (S, "Agent1:toolCall", "Agent2:toolCall", "SubTool1:httpRequest468", "End"),
        (
            "start>Agent1",
            "Agent1>Agent2@Agent1-source-selectedTools",
            "Agent1>End@Agent1-source-right",
            "Agent2>SubTool1@Agent2-source-selectedTools",
            "Agent2>End@Agent2-source-right",
            "SubTool1>End",
        ),
        (
            Step(
                "Agent1调用Agent2: Agent2应该运行",
                {"Agent1>Agent2": "a", "Agent1>End": "w"},
                {"Agent2": "run"},
            ),
            Step(
                "Agent2调用SubTool1: SubTool1应该运行",
                {"Agent1>Agent2": "a", "Agent1>End": "w", "Agent2>SubTool1": "a", "Agent2>End": "w"},
                {"SubTool1": "run"},
            ),
            Step(
                "Agent2不调用SubTool1: End应该运行",
                {
                    "Agent1>Agent2": "a",
                    "Agent1>End": "a",
                    "Agent2>SubTool1": "s",
                    "Agent2>End": "a",
                    "SubTool1>End": "s",
                },
                {"End": "run"},
            ),
            Step(
                "所有工具执行完成: End应该运行",
                {
                    "Agent1>Agent2": "a",
                    "Agent1>End": "a",
                    "Agent2>SubTool1": "a",
                    "Agent2>End": "a",
                    "SubTool1>End": "a",
                },
                {"End": "run"},
            ),
        ),
    ),
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景18: 工具调用 - 工具与分支结合场景",
        (S, "Agent:toolCall", "Tool1:httpRequest468", f"IfElse:{IF}", "End1", "End2"),
        (
            "start>Agent",
            "Agent>Tool1@Agent-source-selectedTools",
            "Agent>IfElse@Agent-source-right",
            "Tool1>IfElse",
            "IfElse>End1@IfElse-source-if",
            "IfElse>End2@IfElse-source-else",
        ),
        (
            Step(
                "Agent调用Tool1，IfElse走if分支: End1应该运行",
                {
                    "Agent>Tool1": "a",
                    "Agent>IfElse": "a",
                    "Tool1>IfElse": "a",
                    "IfElse>End1": "a",
                    "IfElse>End2": "s",
                },
                {"End1": "run", "End2": "skip"},
            ),
            Step(
                "Agent不调用Tool1，IfElse走else分支: End2应该运行",
                {
                    "Agent>Tool1": "s",
                    "Agent>IfElse": "a",
                    "Tool1>IfElse": "s",
                    "IfElse>End1": "s",
                    "IfElse>End2": "a",
                },
                {"End1": "skip", "End2": "run"},
            ),
        ),
    ),
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景19: 工具调用 - 工具调用与循环结合",
        (S, "Agent:toolCall", "Tool1:httpRequest468", f"IfElse:{IF}", "End"),
        (
            "start>Agent",
            "Agent>Tool1@Agent-source-selectedTools",
            "Agent>IfElse@Agent-source-right",
            "Tool1>IfElse",
            "IfElse>End@IfElse-source-if",
            "IfElse>Agent@IfElse-source-else",
        ),
        (
            Step(
                "第一次执行：Agent 调用 Tool1，Tool1 应该运行",
                {"start>Agent": "a", "IfElse>Agent": "w", "Agent>Tool1": "a", "Agent>IfElse": "w"},
                {"Tool1": "run"},
            ),
            Step(
                "循环执行：IfElse 走 else 分支回到 Agent，Agent 应该运行",
                {"start>Agent": "s", "IfElse>Agent": "a", "IfElse>End": "s"},
                {"Agent": "run"},
            ),
            Step(
                "循环中再次调用工具：Tool1 应该运行",
                {"start>Agent": "s", "IfElse>Agent": "a", "Agent>Tool1": "a", "Agent>IfElse": "w"},
                {"Tool1": "run"},
            ),
            Step(
                "循环中不调用工具：IfElse 应该运行",
                {
                    "start>Agent": "s",
                    "IfElse>Agent": "a",
                    "Agent>Tool1": "s",
                    "Agent>IfElse": "a",
                    "Tool1>IfElse": "s",
                },
                {"IfElse": "run"},
            ),
        ),
        (("Agent 节点应该分成 2 组", "Agent", 2, None),),
    ),
    Scenario(
        TOOLCALL,
        TOOLCALL_COMMIT,
        "场景20: 工具调用 - 多 Agent 并行调用工具后汇聚",
        (S, "Agent1:toolCall", "Agent2:toolCall", "Tool1:httpRequest468", "Tool2:httpRequest468", "End"),
        (
            "start>Agent1",
            "start>Agent2",
            "Agent1>Tool1@Agent1-source-selectedTools",
            "Agent1>End@Agent1-source-right",
            "Agent2>Tool2@Agent2-source-selectedTools",
            "Agent2>End@Agent2-source-right",
            "Tool1>End",
            "Tool2>End",
        ),
        (
            Step(
                "两个 Agent 都调用工具：End 应该等待",
                {
                    "Agent1>Tool1": "a",
                    "Agent1>End": "w",
                    "Agent2>Tool2": "a",
                    "Agent2>End": "w",
                    "Tool1>End": "w",
                    "Tool2>End": "w",
                },
                {"End": "wait"},
            ),
            Step(
                "Agent1 调用工具，Agent2 不调用：End 应该等待 Tool1",
                {
                    "Agent1>Tool1": "a",
                    "Agent1>End": "w",
                    "Agent2>Tool2": "s",
                    "Agent2>End": "a",
                    "Tool1>End": "w",
                    "Tool2>End": "s",
                },
                {"End": "wait"},
            ),
            Step(
                "都不调用工具：End 应该运行",
                {
                    "Agent1>Tool1": "s",
                    "Agent1>End": "a",
                    "Agent2>Tool2": "s",
                    "Agent2>End": "a",
                    "Tool1>End": "s",
                    "Tool2>End": "s",
                },
                {"End": "run"},
            ),
            Step(
                "所有工具执行完成：End 应该运行",
                {
                    "Agent1>Tool1": "a",
                    "Agent1>End": "a",
                    "Agent2>Tool2": "a",
                    "Agent2>End": "a",
                    "Tool1>End": "a",
                    "Tool2>End": "a",
                },
                {"End": "run"},
            ),
        ),
        (("End 节点应该只有 1 组（并行汇聚）", "End", 1, None),),
    ),
    # ---------------------------------------------------------------- the older file's edge cases
    Scenario(
        OLD,
        OLD_COMMIT,
        "边界场景 > 场景21: 混合边状态 - 部分 active、部分 waiting、部分 skipped",
        (S, "A", "B", "C", "D"),
        ("start>A", "start>B", "start>C", "A>D", "B>D", "C>D"),
        (
            Step(
                "A active, B waiting, C skipped → D 应该等待",
                {"A>D": "a", "B>D": "w", "C>D": "s"},
                {"D": "wait"},
            ),
            Step(
                "A active, B active, C skipped → D 应该运行",
                {"A>D": "a", "B>D": "a", "C>D": "s"},
                {"D": "run"},
            ),
            Step(
                "A skipped, B skipped, C skipped → D 应该跳过",
                {"A>D": "s", "B>D": "s", "C>D": "s"},
                {"D": "skip"},
            ),
            Step(
                "A waiting, B waiting, C waiting → D 应该等待",
                {"A>D": "w", "B>D": "w", "C>D": "w"},
                {"D": "wait"},
            ),
        ),
        (("D 节点应该只有 1 组（并行汇聚）", "D", 1, None),),
    ),
    Scenario(
        OLD,
        OLD_COMMIT,
        "边界场景 > 场景22: 孤立节点和终止节点",
        (S, "A", "B", "C"),
        ("start>A", "A>B"),
        (
            Step("B 节点（终止节点）应该能正常运行", {"A>B": "a"}, {"B": "run"}),
            Step("C 节点（孤立节点）没有输入边分组，应该返回 run", {}, {"C": "run"}),
        ),
        (("C 节点（孤立节点）没有输入边分组，应该返回 run", "C", 0, None),),
    ),
    Scenario(
        OLD,
        OLD_COMMIT,
        "边界场景 > 场景23: userSelect 节点的多选项分支",
        (S, "Select:userSelect", "A", "B", "C", "End"),
        (
            "start>Select",
            "Select>A@Select-source-option1",
            "Select>B@Select-source-option2",
            "Select>C@Select-source-option3",
            "A>End",
            "B>End",
            "C>End",
        ),
        (
            Step(
                "选择 option1：A 应该运行，B 和 C 应该跳过",
                {"Select>A": "a", "Select>B": "s", "Select>C": "s"},
                {"A": "run", "B": "skip", "C": "skip"},
            ),
            Step(
                "选择 option2：B 应该运行，A 和 C 应该跳过",
                {"Select>A": "s", "Select>B": "a", "Select>C": "s"},
                {"A": "skip", "B": "run", "C": "skip"},
            ),
            Step(
                "A 执行完成后，End 应该运行",
                {"Select>A": "a", "Select>B": "s", "Select>C": "s", "A>End": "a", "B>End": "s", "C>End": "s"},
                {"End": "run"},
            ),
        ),
        (("End 节点应该只有 1 组（并行汇聚）", "End", 1, None),),
    ),
)
