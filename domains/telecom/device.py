"""The customer's phone: the tools the customer uses on their own device (dual control).

A deterministic simulation of τ²-bench's telecom user side (tau2-compat §4.6): the network search,
the status bar, the speed test and the MMS rules, every write tool's exact state effect, and the
set-up functions tasks use to break a phone. Messages are this project's own words; only the data
they carry (status bar tokens, speeds, amounts, ids) follows the benchmark.

Only `make_payment` reaches the carrier's records (through the sync step), so it is the only
customer tool that touches agent-ledger paths.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.domain import Tool, ToolError

from .schema import NETWORK_MODES, PERMISSIONS, APNSettings, TelecomState, TelecomUserDB, VpnDetails

SIGNAL_TOKENS = {
    "none": "📵 No Signal",
    "poor": "📶¹ Poor",
    "fair": "📶² Fair",
    "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}
SPEED_RANGES = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SIGNAL_FACTORS = {"none": 0.0, "poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0}
SPEED_ADVICE = {
    "Very Poor": "only very light use such as short text messages will work",
    "Poor": "expect slow browsing; streaming will not work well",
    "Fair": "fine for browsing and email, standard-quality streaming",
    "Good": "good for streaming and video calls",
    "Excellent": "fast enough for anything, including HD streaming and large downloads",
}
VPN_ON_CONNECT = ("192.168.1.1", "OpenVPN", "excellent")


# ----------------------------------------------------------------------------- simulation


def network_search(user: TelecomUserDB) -> None:
    """Re-register on the network: connection, technology and signal follow from the phone and place."""
    d, s = user.device, user.surroundings
    sim = "missing" if d.sim_card_missing else d.sim_card_status
    if sim == "active":
        d.network_connection_status = "connected"
        mode = d.network_mode_preference
        if mode == "4g_5g_preferred":
            five = s.signal_strength.get("5G", "none")
            if five != "none":
                tech, signal = "5G", five
            else:
                tech, signal = "4G", s.signal_strength.get("4G", "none")
        else:
            tech = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}[mode]
            signal = s.signal_strength.get(tech, "none")
        d.network_technology_connected = tech
        d.network_signal_strength = signal
    else:
        _no_service(user)
    if d.airplane_mode or d.active_apn_settings.apn_name == "broken" or not s.line_active:
        _no_service(user)


def _no_service(user: TelecomUserDB) -> None:
    d = user.device
    d.network_connection_status = "no_service"
    d.network_technology_connected = "none"
    d.network_signal_strength = "none"


def mobile_data_working(user: TelecomUserDB) -> bool:
    d, s = user.device, user.surroundings
    if d.airplane_mode or d.network_signal_strength == "none" or d.network_connection_status == "no_service":
        return False
    if s.is_abroad and (not d.roaming_enabled or not s.roaming_allowed):
        return False
    return d.data_enabled and not s.mobile_data_usage_exceeded


def can_send_mms_now(user: TelecomUserDB) -> bool:
    d = user.device
    if not mobile_data_working(user) or d.network_technology_connected == "2G":
        return False
    if d.wifi_calling_enabled and d.wifi_calling_mms_over_wifi:
        return False
    if d.active_apn_settings.mmsc_url is None:
        return False
    app = d.app_statuses.get("messaging")
    return app is not None and app.permissions.sms and app.permissions.storage


def status_bar(user: TelecomUserDB) -> str:
    d = user.device
    parts: list[str] = []
    if d.airplane_mode:
        parts.append("✈️ Airplane Mode")
    else:
        parts.append(SIGNAL_TOKENS[d.network_signal_strength])
        if d.network_technology_connected != "none":
            parts.append(d.network_technology_connected)
        if d.data_enabled and d.network_technology_connected != "none":
            parts.append("📱 Data Enabled")
            if d.data_saver_mode:
                parts.append("🔽 Data Saver")
        else:
            parts.append("📵 Data Disabled")
    if d.wifi_enabled and d.wifi_connected:
        parts.append(f"📡 Connected to {d.wifi_ssid}" if d.wifi_ssid else "📡 Enabled")
    if d.vpn_connected:
        parts.append("🔒 VPN Connected")
    parts.append(f"🔋 {d.battery_level}%")
    return " | ".join(parts)


def speed_test(user: TelecomUserDB) -> tuple[float | None, str]:
    """(Mbps, label), or (None, "No Connection") when mobile data does not work."""
    if not mobile_data_working(user):
        return None, "No Connection"
    d = user.device
    factor = 1.0
    if d.vpn_connected and d.vpn_details is not None and d.vpn_details.server_performance == "poor":
        factor = 0.1
    if d.data_saver_mode:
        factor *= 0.2
    low, high = SPEED_RANGES[d.network_technology_connected]
    speed = round((low + high) / 2 * SIGNAL_FACTORS[d.network_signal_strength] * factor, 2)
    if speed < 1:
        label = "Very Poor"
    elif speed < 5:
        label = "Poor"
    elif speed < 25:
        label = "Fair"
    elif speed < 100:
        label = "Good"
    else:
        label = "Excellent"
    return speed, label


def _wifi_off_air(user: TelecomUserDB) -> None:
    d = user.device
    d.wifi_connected = False
    d.wifi_ssid = None
    d.wifi_signal_strength = "none"


def _with_bar(user: TelecomUserDB, sentence: str) -> str:
    return f"{sentence}\nStatus Bar: {status_bar(user)}"


# ----------------------------------------------------------------------------- write tools


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModeArgs(NoArgs):
    mode: str


class ApnArgs(NoArgs):
    apn_settings: dict[str, Any]


class AppArgs(NoArgs):
    app_name: str


class PermissionArgs(NoArgs):
    app_name: str
    permission: str


def toggle_airplane_mode(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    d.airplane_mode = not d.airplane_mode
    if d.airplane_mode:
        _wifi_off_air(user)
        if d.vpn_connected:
            d.vpn_connected = False
            d.vpn_details = None
    else:
        d.network_connection_status = "searching"
        if d.wifi_enabled:
            _wifi_off_air(user)
    network_search(user)
    return _with_bar(user, f"Airplane mode is now {'ON' if d.airplane_mode else 'OFF'}.")


def reseat_sim_card(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.sim_card_missing = False
    network_search(user)
    return _with_bar(user, "You took the SIM card out and put it back in firmly.")


def toggle_data(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.data_enabled = not user.device.data_enabled
    network_search(user)
    return _with_bar(user, f"Mobile data is now {'ON' if user.device.data_enabled else 'OFF'}.")


def toggle_roaming(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.roaming_enabled = not user.device.roaming_enabled
    network_search(user)
    return _with_bar(user, f"Data roaming on the phone is now {'ON' if user.device.roaming_enabled else 'OFF'}.")


def toggle_data_saver_mode(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.data_saver_mode = not user.device.data_saver_mode
    return _with_bar(user, f"Data saver is now {'ON' if user.device.data_saver_mode else 'OFF'}.")


def set_network_mode_preference(state: TelecomState, args: ModeArgs) -> str:
    user = state.user_db
    if args.mode not in NETWORK_MODES:
        return f"{args.mode!r} is not a network mode; choose one of: {', '.join(NETWORK_MODES)}."
    user.device.network_mode_preference = args.mode  # type: ignore[assignment]
    network_search(user)
    return _with_bar(user, f"Preferred network mode is now {args.mode}.")


def set_apn_settings(state: TelecomState, args: ApnArgs) -> str:
    user = state.user_db
    try:
        settings = APNSettings.model_validate(args.apn_settings)
    except Exception as exc:
        raise ToolError(f"These APN settings are not valid: {str(exc).splitlines()[0]}") from None
    user.device.active_apn_settings = settings
    network_search(user)
    return _with_bar(user, f"APN settings saved (APN name: {settings.apn_name}).")


def reset_apn_settings(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.active_apn_settings.reset_at_reboot = True
    network_search(user)
    return _with_bar(user, "APN settings will return to their defaults the next time the phone restarts.")


def reboot_device(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    steps = ["The phone shut down and started again."]
    if d.active_apn_settings.reset_at_reboot:
        d.active_apn_settings = APNSettings()
        steps.append("APN settings were restored to their defaults.")
    d.network_connection_status = "searching"
    network_search(user)
    steps.append("It searched for the network again.")
    return _with_bar(user, " ".join(steps))


def toggle_wifi(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if d.airplane_mode:
        return _with_bar(user, "Wi-Fi cannot be changed while airplane mode is on; nothing changed.")
    d.wifi_enabled = not d.wifi_enabled
    if not d.wifi_enabled:
        _wifi_off_air(user)
    return _with_bar(user, f"Wi-Fi is now {'ON' if d.wifi_enabled else 'OFF'}.")


def toggle_wifi_calling(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.wifi_calling_enabled = not user.device.wifi_calling_enabled
    return _with_bar(user, f"Wi-Fi calling is now {'ON' if user.device.wifi_calling_enabled else 'OFF'}.")


def connect_vpn(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if d.vpn_connected:
        return "The VPN is already connected; nothing changed."
    server, protocol, performance = VPN_ON_CONNECT
    d.vpn_connected = True
    d.vpn_details = VpnDetails(server_address=server, protocol=protocol, server_performance=performance)
    return _with_bar(user, "The VPN is now connected.")


def disconnect_vpn(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if not d.vpn_connected:
        return _with_bar(user, "No VPN was connected; nothing changed.")
    d.vpn_connected = False
    d.vpn_details = None
    return _with_bar(user, "The VPN is now disconnected.")


def grant_app_permission(state: TelecomState, args: PermissionArgs) -> str:
    user = state.user_db
    permission = args.permission.lower()
    app = user.device.app_statuses.get(args.app_name)
    if app is None:
        return f"Error. There is no app called {args.app_name!r} on this phone."
    if permission not in PERMISSIONS:
        return f"Error. {permission!r} is not a permission; choose one of: {', '.join(PERMISSIONS)}."
    setattr(app.permissions, permission, True)
    return _with_bar(user, f"Success. {args.app_name} now has the {permission} permission.")


def make_payment(state: TelecomState, args: NoArgs) -> str:
    request = state.user_db.surroundings.payment_request
    if request is None:
        return "There is no payment request on this phone to pay."
    request.paid = True
    return f"You paid {request.amount_due} for bill {request.bill_id}. The carrier records it shortly."


# ----------------------------------------------------------------------------- read tools


def check_status_bar(state: TelecomState, args: NoArgs) -> str:
    return f"Status Bar: {status_bar(state.user_db)}"


def check_network_status(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    sim = "missing" if d.sim_card_missing else d.sim_card_status
    lines = [
        f"Airplane Mode: {'ON' if d.airplane_mode else 'OFF'}",
        f"SIM Card Status: {sim}",
        f"Cellular Connection: {d.network_connection_status}",
        f"Cellular Signal: {d.network_signal_strength}",
        f"Cellular Network Type: {d.network_technology_connected}",
        f"Mobile Data Enabled: {'Yes' if d.data_enabled else 'No'}",
        f"Data Roaming Enabled: {'Yes' if d.roaming_enabled else 'No'}",
        f"Wi-Fi Radio: {'ON' if d.wifi_enabled else 'OFF'}",
        f"Wi-Fi Connected: {'Yes' if d.wifi_connected else 'No'}",
    ]
    if d.wifi_connected:
        lines.append(f"Wi-Fi Network: {d.wifi_ssid}")
    return "\n".join(lines)


def check_network_mode_preference(state: TelecomState, args: NoArgs) -> str:
    return f"Preferred network mode: {state.user_db.device.network_mode_preference}"


def run_speed_test(state: TelecomState, args: NoArgs) -> str:
    speed, label = speed_test(state.user_db)
    if speed is None:
        return "Speed test failed: No Connection. Mobile data is not working on this phone right now."
    return f"Download speed: {speed:.2f} Mbps ({label}): {SPEED_ADVICE[label]}."


def check_sim_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    sim = "missing" if d.sim_card_missing else d.sim_card_status
    return {
        "active": "The SIM card is active and working.",
        "missing": "No SIM card is detected in the phone.",
        "locked_pin": "The SIM card is locked and asks for its PIN code.",
        "locked_puk": "The SIM card is locked and asks for its PUK code.",
    }[sim]


def check_data_restriction_status(state: TelecomState, args: NoArgs) -> str:
    return f"Data saver mode: {'ON' if state.user_db.device.data_saver_mode else 'OFF'}"


def check_apn_settings(state: TelecomState, args: NoArgs) -> str:
    apn = state.user_db.device.active_apn_settings
    return f"APN name: {apn.apn_name or 'Not Set'}\nMMSC URL: {apn.mmsc_url or 'Not Set'}"


def check_wifi_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    if not d.wifi_enabled:
        return "Wi-Fi is OFF."
    if d.wifi_connected:
        return f"Wi-Fi is ON and connected to {d.wifi_ssid} (signal: {d.wifi_signal_strength})."
    return "Wi-Fi is ON but not connected to any network."


def check_wifi_calling_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    return (
        f"Wi-Fi calling: {'ON' if d.wifi_calling_enabled else 'OFF'}; "
        f"MMS over Wi-Fi: {'ON' if d.wifi_calling_mms_over_wifi else 'OFF'}"
    )


def check_vpn_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    if not d.vpn_connected:
        return "No VPN is connected."
    details = d.vpn_details.model_dump() if d.vpn_details else {}
    return f"A VPN is connected: {details}"


def check_installed_apps(state: TelecomState, args: NoArgs) -> str:
    return "Installed apps: " + ", ".join(state.user_db.device.app_statuses)


def _app(state: TelecomState, name: str):
    app = state.user_db.device.app_statuses.get(name)
    if app is None:
        raise ToolError(f"There is no app called {name!r} on this phone.")
    return app


def check_app_status(state: TelecomState, args: AppArgs) -> str:
    app = _app(state, args.app_name)
    granted = [p for p in PERMISSIONS if getattr(app.permissions, p)]
    return f"{app.app_name} is installed; permissions granted: {', '.join(granted) or 'none'}."


def check_app_permissions(state: TelecomState, args: AppArgs) -> str:
    app = _app(state, args.app_name)
    granted = [p for p in PERMISSIONS if getattr(app.permissions, p)]
    return f"Permissions of {app.app_name}: {', '.join(granted) or 'none'}."


def can_send_mms(state: TelecomState, args: NoArgs) -> str:
    if can_send_mms_now(state.user_db):
        return "Yes: this phone can send MMS messages."
    return "No: this phone cannot send MMS messages right now."


def check_payment_request(state: TelecomState, args: NoArgs) -> str:
    request = state.user_db.surroundings.payment_request
    if request is None:
        return "There is no payment request on this phone."
    status = "paid" if request.paid else "waiting to be paid"
    return f"Payment request for bill {request.bill_id}: {request.amount_due} ({status})."


# ----------------------------------------------------------------------------- the table


def _user(name: str, kind: str, args: type[BaseModel], run: Callable[..., Any], description: str, touches=()) -> Tool:
    return Tool(name, kind, args, run, description, touches=touches, requestor="user")  # type: ignore[arg-type]


USER_TOOLS: list[Tool] = [
    _user("check_status_bar", "read", NoArgs, check_status_bar, "What the phone's status bar shows."),
    _user("check_network_status", "read", NoArgs, check_network_status, "Airplane mode, SIM, connection, signal, network type, data, roaming and Wi-Fi."),
    _user("check_network_mode_preference", "read", NoArgs, check_network_mode_preference, "The preferred network mode."),
    _user("set_network_mode_preference", "write", ModeArgs, set_network_mode_preference, "Choose the preferred network mode: 4g_5g_preferred, 4g_only, 3g_only or 2g_only."),
    _user("run_speed_test", "read", NoArgs, run_speed_test, "Measure the mobile data download speed."),
    _user("toggle_airplane_mode", "write", NoArgs, toggle_airplane_mode, "Turn airplane mode on or off."),
    _user("check_sim_status", "read", NoArgs, check_sim_status, "Whether the SIM card works, is missing or is locked."),
    _user("reseat_sim_card", "write", NoArgs, reseat_sim_card, "Take the SIM card out and put it back in."),
    _user("toggle_data", "write", NoArgs, toggle_data, "Turn mobile data on or off."),
    _user("toggle_roaming", "write", NoArgs, toggle_roaming, "Turn the phone's own data-roaming switch on or off."),
    _user("check_data_restriction_status", "read", NoArgs, check_data_restriction_status, "Whether data saver mode is on."),
    _user("toggle_data_saver_mode", "write", NoArgs, toggle_data_saver_mode, "Turn data saver mode on or off."),
    _user("check_apn_settings", "read", NoArgs, check_apn_settings, "The APN name and MMSC URL in use."),
    _user("set_apn_settings", "write", ApnArgs, set_apn_settings, "Replace the APN settings."),
    _user("reset_apn_settings", "write", NoArgs, reset_apn_settings, "Restore default APN settings (takes effect at the next restart)."),
    _user("check_wifi_status", "read", NoArgs, check_wifi_status, "Whether Wi-Fi is on and connected."),
    _user("toggle_wifi", "write", NoArgs, toggle_wifi, "Turn Wi-Fi on or off."),
    _user("check_wifi_calling_status", "read", NoArgs, check_wifi_calling_status, "Whether Wi-Fi calling (and MMS over Wi-Fi) is on."),
    _user("toggle_wifi_calling", "write", NoArgs, toggle_wifi_calling, "Turn Wi-Fi calling on or off."),
    _user("check_vpn_status", "read", NoArgs, check_vpn_status, "Whether a VPN is connected, with its details."),
    _user("connect_vpn", "write", NoArgs, connect_vpn, "Connect the VPN."),
    _user("disconnect_vpn", "write", NoArgs, disconnect_vpn, "Disconnect the VPN."),
    _user("check_installed_apps", "read", NoArgs, check_installed_apps, "The apps installed on the phone."),
    _user("check_app_status", "read", AppArgs, check_app_status, "One app's status and permissions."),
    _user("check_app_permissions", "read", AppArgs, check_app_permissions, "The permissions granted to one app."),
    _user("grant_app_permission", "write", PermissionArgs, grant_app_permission, "Grant an app a permission (sms, storage, phone or network)."),
    _user("can_send_mms", "read", NoArgs, can_send_mms, "Whether the phone can send an MMS message now."),
    _user("reboot_device", "write", NoArgs, reboot_device, "Restart the phone."),
    _user("check_payment_request", "read", NoArgs, check_payment_request, "The carrier's payment request on the phone, if any."),
    # Paying changes the bill in the carrier's records at the next sync: every bill read goes stale.
    _user("make_payment", "write", NoArgs, make_payment, "Pay the carrier's payment request shown on the phone.", touches=("bills.*",)),
]


# ----------------------------------------------------------------------------- set-up functions


def _toggle_until(state: TelecomState, flag: Callable[[], bool], target: bool, toggle: Callable[..., Any]) -> None:
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
        d.sim_card_status = {"pin": "locked_pin", "puk": "locked_puk"}[mode]
        network_search(user)

    def break_apn_settings() -> None:
        d.active_apn_settings.apn_name = "broken"
        network_search(user)

    def break_apn_mms_setting() -> None:
        d.active_apn_settings.mmsc_url = None

    def break_vpn() -> None:
        connect_vpn(state, NoArgs())
        if d.vpn_details is not None:
            d.vpn_details.server_performance = "poor"

    def remove_app_permission(app_name: str, permission: str) -> None:
        setattr(d.app_statuses[app_name].permissions, permission.lower(), False)

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
