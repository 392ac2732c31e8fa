"""What a task does to the customer's phone before the conversation, and what it checks after.

τ²-bench's telecom tasks name user-side functions in `initialization_actions` (break the APN,
unseat the SIM, turn airplane mode on) and in `env_assertions` (is mobile data working, is the
speed excellent). They are written here over the phone of `device.py`, apart from the customer's
tools: the tools are what the customer may do during a conversation, these are the task's hands
on the phone before and after it. `state.call_function` looks names up in both tables.
"""

from __future__ import annotations

from typing import Any, Callable

from .device import (
    NoArgs,
    can_send_mms_now,
    connect_vpn,
    mobile_data_working,
    network_search,
    speed_test,
    toggle_airplane_mode,
    toggle_data,
    toggle_data_saver_mode,
    toggle_roaming,
    toggle_wifi_calling,
)
from .schema import PERMISSIONS, TelecomState


def _toggle_until(state: TelecomState, flag: Callable[[], bool], target: bool, toggle: Callable[..., Any]) -> None:
    """Flip the switch, and flip it back if that moved it away from `target`: as τ²-bench's set-up
    does, a switch already in place is flipped twice, and each flip has its side effects (a network
    search, Wi-Fi and VPN dropped by airplane mode)."""
    toggle(state, NoArgs())
    if flag() != target:
        toggle(state, NoArgs())


def user_setup_functions(state: TelecomState) -> dict[str, Callable[..., Any]]:
    """The user-side functions `initialization_actions` may name (τ²-bench's names), bound to `state`."""
    user = state.user_db
    d, s = user.device, user.surroundings

    def set_user_info(name: str, phone_number: str) -> None:
        s.name = name
        s.phone_number = phone_number

    def set_user_location(abroad: bool) -> None:
        s.is_abroad = abroad

    def set_wifi_calling(enabled: bool, mms_over_wifi: bool | None = None) -> None:
        if d.wifi_calling_enabled != enabled:
            toggle_wifi_calling(state, NoArgs())
        if mms_over_wifi is not None:
            d.wifi_calling_mms_over_wifi = mms_over_wifi

    def unseat_sim_card() -> None:
        d.sim_card_missing = True
        network_search(user)

    def lock_sim_card(mode: str) -> None:
        locked = {"pin": "locked_pin", "puk": "locked_puk"}.get(mode)
        if locked is not None:
            d.sim_card_status = locked  # type: ignore[assignment]
        network_search(user)

    def break_apn_settings() -> None:
        d.active_apn_settings.apn_name = "broken"
        network_search(user)

    def break_apn_mms_setting() -> None:
        d.active_apn_settings.mmsc_url = None

    def break_vpn() -> None:
        # τ²-bench degrades the server profile it connects to, not only this connection, so a
        # later reconnect is slow too (unless the phone was already connected to another one)
        if not d.vpn_connected:
            user.vpn_server_performance = "poor"
        connect_vpn(state, NoArgs())
        if d.vpn_details is not None:
            d.vpn_details.server_performance = "poor"

    def remove_app_permission(app_name: str, permission: str) -> None:
        app, permission = d.app_statuses.get(app_name), permission.lower()
        if app is not None and permission in PERMISSIONS:  # else nothing to remove, and no error
            setattr(app.permissions, permission, False)

    def turn_data_on() -> None:
        d.data_enabled = True

    return {
        "set_user_info": set_user_info,
        "set_user_location": set_user_location,
        "simulate_network_search": lambda: network_search(user),
        "turn_airplane_mode_on": lambda: _toggle_until(state, lambda: d.airplane_mode, True, toggle_airplane_mode),
        "turn_airplane_mode_off": lambda: _toggle_until(state, lambda: d.airplane_mode, False, toggle_airplane_mode),
        "turn_roaming_on": lambda: _toggle_until(state, lambda: d.roaming_enabled, True, toggle_roaming),
        "turn_roaming_off": lambda: _toggle_until(state, lambda: d.roaming_enabled, False, toggle_roaming),
        "turn_data_saver_mode_on": lambda: _toggle_until(state, lambda: d.data_saver_mode, True, toggle_data_saver_mode),
        "turn_data_saver_mode_off": lambda: _toggle_until(state, lambda: d.data_saver_mode, False, toggle_data_saver_mode),
        "turn_data_off": lambda: _toggle_until(state, lambda: d.data_enabled, False, toggle_data),
        "turn_data_on": turn_data_on,
        "set_wifi_calling": set_wifi_calling,
        "unseat_sim_card": unseat_sim_card,
        "lock_sim_card": lock_sim_card,
        "break_apn_settings": break_apn_settings,
        "break_apn_mms_setting": break_apn_mms_setting,
        "break_vpn": break_vpn,
        "remove_app_permission": remove_app_permission,
    }


def user_assertions(state: TelecomState) -> dict[str, Callable[..., bool]]:
    """The user-side checks `env_assertions` may name, bound to `state`."""
    user = state.user_db
    d = user.device

    def assert_internet_speed(expected_speed: float, expected_desc: str | None = None) -> bool:
        speed, label = speed_test(user)
        speed = speed or 0.0
        return speed >= expected_speed and (expected_desc is None or label.lower() == expected_desc.lower())

    return {
        "assert_airplane_mode_status": lambda expected_status: d.airplane_mode == expected_status,
        "assert_service_status": lambda expected_status: d.network_connection_status == expected_status,
        "assert_mobile_data_status": lambda expected_status: mobile_data_working(user) == expected_status,
        "assert_mobile_data_roaming_status": lambda expected_status: d.roaming_enabled == expected_status,
        "assert_mobile_data_saver_mode_status": lambda expected_status: d.data_saver_mode == expected_status,
        "assert_internet_speed": assert_internet_speed,
        "assert_internet_not_excellent": lambda: speed_test(user)[1] != "Excellent",
        "assert_can_send_mms": lambda expected_status: can_send_mms_now(user) == expected_status,
        "assert_mobile_data_usage_exceeded": lambda expected_status: user.surroundings.mobile_data_usage_exceeded
        == expected_status,
    }
