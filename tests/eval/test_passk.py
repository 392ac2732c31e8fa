"""pass^k against hand-computed values."""

import pytest

from ledger_tui.eval.passk import pass_hat_k, pass_k_curve


def test_all_k_succeeded_when_n_equals_k():
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(4, 3, 4) == 0.0


def test_unbiased_estimator_with_more_trials_than_k():
    # 5 trials, 3 successes: pass^1 = 3/5, pass^2 = C(3,2)/C(5,2) = 3/10, pass^3 = 1/10, pass^4 = 0
    assert pass_hat_k(5, 3, 1) == pytest.approx(0.6)
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_hat_k(5, 3, 3) == pytest.approx(0.1)
    assert pass_hat_k(5, 3, 4) == 0.0


def test_curve_is_the_mean_over_tasks():
    curve = pass_k_curve({"a": [True] * 4, "b": [True, True, False, True], "c": [False] * 4})
    # a: 1 for every k; b: 3/4, C(3,2)/C(4,2)=1/2, 1/4, 0; c: 0
    assert curve[1] == pytest.approx((1 + 0.75 + 0) / 3)
    assert curve[2] == pytest.approx((1 + 0.5) / 3)
    assert curve[3] == pytest.approx((1 + 0.25) / 3)
    assert curve[4] == pytest.approx(1 / 3)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 2, 4)
