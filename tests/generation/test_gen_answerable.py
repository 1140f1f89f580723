from generation.answerable import key_terms, unanswered_reason


def test_numeric_question_needs_a_number_in_the_evidence() -> None:
    q = "发生个人信息泄露后，处理者须在多少小时内通知主管部门？"
    no_number = "第五十七条 发生或者可能发生个人信息泄露的，个人信息处理者应当立即采取补救措施。"
    assert "quantity" in unanswered_reason(q, "numeric", no_number, [no_number])
    assert (
        unanswered_reason(q, "numeric", "应当在七十二小时内通知。", ["应当在七十二小时内通知。"])
        == ""
    )
    assert unanswered_reason(q, "numeric", "现在为 3.141592。", ["现在为 3.141592。"]) == ""
    # Only quantity questions are held to that.
    assert unanswered_reason(q, "definition", no_number, [no_number]) == ""


def test_named_things_must_appear_in_a_cited_passage() -> None:
    q = "TiDB 软硬件环境需求中，TiProxy 组件的默认服务端口是多少？"
    assert key_terms(q) == ["TiDB", "TiProxy"]
    port_table = "组件: TiFlash | 默认端口: 9000 | 说明: TiFlash TCP 服务端口"
    assert "TiProxy" in unanswered_reason(q, "general", port_table, [port_table])
    cited = ["TiDB 组件 TiProxy 的端口为 6000"]
    assert unanswered_reason(q, "general", cited[0], cited) == ""
    assert key_terms("What does P12.1.2 fix in operationId handling?") == ["P12.1.2", "operationId"]
