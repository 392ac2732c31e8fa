"""The customer's phone (τ²-bench's user side, tau2-compat §4.6) and the sync step (§4.7)."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom import device
from ledger_tui.domains.telecom.schema import TelecomUserDB
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.store.serialize import digest

DOMAIN = load_domain("telecom")
TAU2_DEFAULT_USER_DB = "e1f3a8637388808221228ff3f87294444e6b64caf721f5eb243a85d0a9380b28"


@pytest.fixture(scope="module")
def base_state():
    return DOMAIN.load_db()


def john(base_state, *actions):
    """John Smith's phone (τ²-bench's task set-up) after the given set-up actions."""
    state = base_state.model_copy(deep=True)
    init = [
        {"env_type": "user", "func_name": "set_user_info", "arguments": {"name": "John Smith", "phone_number": "555-123-2002"}},
        {"env_type": "user", "func_name": "simulate_network_search", "arguments": {}},
    ]
    DOMAIN.init_task(state, {"initialization_actions": init + list(actions)})
    return Environment(DOMAIN, db=state)


def user(env, name, **arguments):
    return env.execute(ToolCall(id="u", name=name, arguments=arguments, requestor="user"))


def agent(env, name, **arguments):
    return env.execute(ToolCall(id="a", name=name, arguments=arguments))


def setup(env_type, func, **arguments):
    return {"env_type": env_type, "func_name": func, "arguments": arguments}


def test_factory_phone_digests_like_the_benchmark():
    assert digest(TelecomUserDB()) == TAU2_DEFAULT_USER_DB


def test_factory_phone_shows_good_signal_until_it_searches(base_state):
    state = base_state.model_copy(deep=True)
    DOMAIN.init_task(state, {"initialization_actions": []})
    env = Environment(DOMAIN, db=state)
    assert user(env, "check_status_bar").content == "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
    assert "220.00 Mbps (Excellent)" in user(env, "run_speed_test").content


def test_healthy_phone_status_bar_and_speed(base_state):
    env = john(base_state)
    assert user(env, "check_status_bar").content == "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
    assert user(env, "run_speed_test").content == "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast."
    assert user(env, "can_send_mms").content == "Your messaging app can send MMS messages."


def test_airplane_mode_drops_service_and_wifi(base_state):
    env = john(base_state)
    user(env, "toggle_wifi")
    env.db.user_db.device.wifi_connected, env.db.user_db.device.wifi_ssid = True, "Home"
    out = user(env, "toggle_airplane_mode").content
    d = env.db.user_db.device
    assert out.endswith("Status Bar: ✈️ Airplane Mode | 🔋 80%")
    assert (d.network_connection_status, d.wifi_connected, d.wifi_ssid, d.wifi_enabled) == ("no_service", False, None, True)
    assert user(env, "toggle_wifi").content.startswith("Cannot change Wi-Fi settings while Airplane Mode is ON.")
    assert d.wifi_enabled
    user(env, "toggle_airplane_mode")
    assert d.network_connection_status == "connected"


def test_network_mode_preference(base_state):
    env = john(base_state, setup("user", "set_network_mode_preference", mode="2g_only"))
    d = env.db.user_db.device
    assert (d.network_technology_connected, d.network_signal_strength) == ("2G", "poor")
    assert "Very Poor" in user(env, "run_speed_test").content
    assert not device.can_send_mms_now(env.db.user_db)
    out = user(env, "set_network_mode_preference", mode="6g").content
    assert not out.startswith("Error") and "4g_5g_preferred" in out and d.network_mode_preference == "2g_only"
    env.db.user_db.surroundings.signal_strength["5G"] = "none"
    user(env, "set_network_mode_preference", mode="4g_5g_preferred")
    assert (d.network_technology_connected, d.network_signal_strength) == ("4G", "good")


def test_speed_factors_for_data_saver_and_a_poor_vpn(base_state):
    env = john(base_state, setup("user", "turn_data_saver_mode_on"))
    assert "55.00 Mbps (Good)" in user(env, "run_speed_test").content
    assert "🔽 Data Saver" in user(env, "check_status_bar").content
    env = john(base_state, setup("user", "break_vpn"))
    assert "27.50 Mbps (Good)" in user(env, "run_speed_test").content
    assert "'server_performance': <PerformanceLevel.POOR: 'poor'>" in user(env, "check_vpn_status").content
    user(env, "disconnect_vpn")
    user(env, "connect_vpn")
    # as in τ²-bench, break_vpn degraded the VPN server itself: reconnecting is still slow ...
    assert env.db.user_db.device.vpn_details.server_performance == "poor"
    # ... but only in that session: another phone connects at full speed
    env = john(base_state)
    user(env, "connect_vpn")
    assert env.db.user_db.device.vpn_details.server_performance == "excellent"


def test_broken_apn_is_fixed_by_reset_then_reboot(base_state):
    env = john(base_state, setup("user", "break_apn_settings"))
    d = env.db.user_db.device
    assert d.network_connection_status == "no_service"
    user(env, "reset_apn_settings")
    assert d.network_connection_status == "no_service" and d.active_apn_settings.reset_at_reboot
    user(env, "reboot_device")
    assert d.network_connection_status == "connected" and d.active_apn_settings.apn_name == "internet"
    assert user(env, "set_apn_settings", apn_settings={"apn_name": "internet", "bogus": 1}).error


def test_mms_rules(base_state):
    env = john(base_state, setup("user", "set_wifi_calling", enabled=True, mms_over_wifi=True))
    assert user(env, "can_send_mms").content == "Your messaging app cannot send MMS messages."
    user(env, "toggle_wifi_calling")
    assert user(env, "can_send_mms").content == "Your messaging app can send MMS messages."
    env = john(base_state, setup("user", "remove_app_permission", app_name="messaging", permission="storage"))
    assert user(env, "can_send_mms").content == "Your messaging app cannot send MMS messages."
    bad = user(env, "grant_app_permission", app_name="messaging", permission="camera")
    assert not bad.error and bad.content.startswith("Error.")
    granted = user(env, "grant_app_permission", app_name="messaging", permission="STORAGE").content
    assert granted.startswith("Success. Permission 'storage' granted to app 'messaging'.\nStatus Bar: ")
    assert user(env, "can_send_mms").content == "Your messaging app can send MMS messages."
    env = john(base_state, setup("user", "break_apn_mms_setting"))
    assert "MMSC URL (for picture messages): Not Set" in user(env, "check_apn_settings").content
    assert user(env, "can_send_mms").content == "Your messaging app cannot send MMS messages."


def test_missing_and_locked_sim(base_state):
    env = john(base_state, setup("user", "unseat_sim_card"))
    assert "No SIM" in user(env, "check_sim_status").content
    user(env, "reseat_sim_card")
    assert env.db.user_db.device.network_connection_status == "connected"
    env = john(base_state, setup("user", "lock_sim_card", mode="pin"))
    assert "PIN" in user(env, "check_sim_status").content
    user(env, "reseat_sim_card")
    assert env.db.user_db.device.network_connection_status == "no_service"


def test_sync_carries_line_status_roaming_and_usage_to_the_phone(base_state):
    env = john(base_state, setup("user", "set_user_location", abroad=True), setup("user", "turn_roaming_on"))
    s = env.db.user_db.surroundings
    assert not s.roaming_allowed and not device.mobile_data_working(env.db.user_db)
    agent(env, "enable_roaming", customer_id="C1001", line_id="L1002")
    assert s.roaming_allowed and device.mobile_data_working(env.db.user_db)
    agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="test")
    assert not s.line_active
    assert env.db.user_db.device.network_connection_status == "connected"  # until the next search
    user(env, "reboot_device")
    assert env.db.user_db.device.network_connection_status == "no_service"
    env = john(base_state, setup("assistant", "set_data_usage", customer_id="C1001", line_id="L1002", data_used_gb=15.1))
    assert env.db.user_db.surroundings.mobile_data_usage_exceeded
    agent(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)
    assert not env.db.user_db.surroundings.mobile_data_usage_exceeded


def test_payment_chain_through_sync(base_state):
    env = john(base_state, setup("assistant", "suspend_line_for_overdue_bill", customer_id="C1001", line_id="L1002",
                                 new_bill_id="B1234321", contract_ended=False))
    db = env.db.agent_db
    new = next(b for b in db.bills if b.bill_id == "B1234321")
    assert (new.status, new.total_due, new.line_items[0].description) == ("Overdue", 65.0, "Charge for line L1002")
    assert user(env, "make_payment").content == "You do not have a payment request."
    agent(env, "send_payment_request", customer_id="C1001", bill_id="B1234321")
    assert user(env, "check_payment_request").content == "You have a payment request for bill B1234321 of 65.0 USD."
    assert user(env, "make_payment").content == "Payment of 65.0 USD has been made for bill B1234321."
    assert new.status == "Paid" and env.db.user_db.surroundings.payment_request is None
    agent(env, "resume_line", customer_id="C1001", line_id="L1002")
    user(env, "reboot_device")
    assert env.db.user_db.device.network_connection_status == "connected"


def test_sync_is_a_no_op_without_a_phone_number(base_state):
    state = base_state.model_copy(deep=True)
    state.user_db = TelecomUserDB()
    env = Environment(DOMAIN, db=state)
    agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="x")
    assert env.db.user_db == TelecomUserDB()


def test_user_tools_are_not_reachable_by_the_agent(base_state):
    env = john(base_state)
    assert agent(env, "toggle_roaming").error
    assert not user(env, "toggle_roaming").error
    assert user(env, "resume_line", customer_id="C1001", line_id="L1002").error
