"""The customer's phone: the tools the customer uses on their own device (dual control).

A deterministic simulation of τ²-bench's telecom user side (tau2-compat §4.6): the network search,
the status bar, the speed test and the MMS rules, and every write tool's exact state effect (the
set-up functions tasks use to break a phone, and their checks, are in `phone_setup.py`). What the
phone shows is the benchmark's text word for word (a simulated customer reads it, and a strict
re-grade compares it); an app name or permission of the wrong JSON type runs as given, as it does
there.

Only `make_payment` reaches the carrier's records (through the sync step), so it is the only
customer tool that touches agent-ledger paths.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.domain import Tool

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
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
SIM_STATUS_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
VPN_SERVER = ("192.168.1.1", "OpenVPN")


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


def _on(flag: bool) -> str:
    return "ON" if flag else "OFF"


def _yes(flag: bool) -> str:
    return "Yes" if flag else "No"


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
    return _with_bar(user, f"Airplane Mode is now {_on(d.airplane_mode)}.")


def reseat_sim_card(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.sim_card_missing = False
    network_search(user)
    return _with_bar(user, "SIM card re-seated successfully.")


def toggle_data(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.data_enabled = not user.device.data_enabled
    network_search(user)
    return _with_bar(user, f"Mobile Data is now {_on(user.device.data_enabled)}.")


def toggle_roaming(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.roaming_enabled = not user.device.roaming_enabled
    network_search(user)
    return _with_bar(user, f"Data Roaming is now {_on(user.device.roaming_enabled)}.")


def toggle_data_saver_mode(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.data_saver_mode = not user.device.data_saver_mode
    return _with_bar(user, f"Data Saver Mode is now {_on(user.device.data_saver_mode)}.")


def set_network_mode_preference(state: TelecomState, args: ModeArgs) -> str:
    user = state.user_db
    if args.mode not in NETWORK_MODES:
        return _with_bar(
            user,
            f"Failed to set network mode: '{args.mode}' is not a valid option. "
            f"Please use one of: {', '.join(NETWORK_MODES)}",
        )
    user.device.network_mode_preference = args.mode  # type: ignore[assignment]
    network_search(user)
    return _with_bar(user, f"Preferred Network Mode set to: {args.mode}")


def set_apn_settings(state: TelecomState, args: ApnArgs) -> str:
    user = state.user_db
    settings = APNSettings.model_validate(args.apn_settings)  # the model reads pydantic's own message
    user.device.active_apn_settings = settings
    network_search(user)
    return _with_bar(user, f"APN settings set to: {settings.apn_name}")


def reset_apn_settings(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.active_apn_settings.reset_at_reboot = True
    network_search(user)
    return _with_bar(user, "APN settings will reset at reboot.")


def reboot_device(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    steps = []
    if d.active_apn_settings.reset_at_reboot:
        d.active_apn_settings = APNSettings()
        steps.append("Resetting APN settings...")
    d.network_connection_status = "searching"
    network_search(user)
    steps.append("Restarting network services...")
    return _with_bar(user, "\n".join(steps))


def toggle_wifi(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if d.airplane_mode:
        return _with_bar(user, "Cannot change Wi-Fi settings while Airplane Mode is ON.")
    d.wifi_enabled = not d.wifi_enabled
    if not d.wifi_enabled:
        _wifi_off_air(user)
    return _with_bar(user, f"Wi-Fi is now {_on(d.wifi_enabled)}.")


def toggle_wifi_calling(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    user.device.wifi_calling_enabled = not user.device.wifi_calling_enabled
    return _with_bar(user, f"Wi-Fi Calling is now {_on(user.device.wifi_calling_enabled)}.")


def connect_vpn(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if d.vpn_connected:
        return "VPN already connected."
    server, protocol = VPN_SERVER
    d.vpn_connected = True
    d.vpn_details = VpnDetails(server_address=server, protocol=protocol, server_performance=user.vpn_server_performance)
    return _with_bar(user, "VPN connected successfully.")


def disconnect_vpn(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    if not d.vpn_connected:
        return _with_bar(user, "No active VPN connection to disconnect.")
    d.vpn_connected = False
    d.vpn_details = None
    return _with_bar(user, "VPN disconnected successfully.")


def grant_app_permission(state: TelecomState, args: PermissionArgs) -> str:
    user = state.user_db
    # in this order, so raw arguments fail as they do there: a list as app name at the lookup, a
    # non-text permission at `lower`, before an unknown app is reported
    app = user.device.app_statuses.get(args.app_name)
    permission = args.permission.lower()
    if app is None:
        return _with_bar(user, f"Error. App '{args.app_name}' not found. Cannot grant permission.")
    if permission not in PERMISSIONS:
        return _with_bar(
            user,
            f"Error. Permission '{permission}' not tracked for app '{args.app_name}', "
            f"available permissions: {list(PERMISSIONS)}",
        )
    setattr(app.permissions, permission, True)
    return _with_bar(user, f"Success. Permission '{permission}' granted to app '{args.app_name}'.")


def make_payment(state: TelecomState, args: NoArgs) -> str:
    request = state.user_db.surroundings.payment_request
    if request is None:
        return "You do not have a payment request."
    request.paid = True
    return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."


# ----------------------------------------------------------------------------- read tools


def check_status_bar(state: TelecomState, args: NoArgs) -> str:
    return f"Status Bar: {status_bar(state.user_db)}"


def check_network_status(state: TelecomState, args: NoArgs) -> str:
    user = state.user_db
    d = user.device
    sim = "missing" if d.sim_card_missing else d.sim_card_status
    lines = [
        f"Airplane Mode: {_on(d.airplane_mode)}",
        f"SIM Card Status: {sim}",
        f"Cellular Connection: {d.network_connection_status}",
        f"Cellular Signal: {d.network_signal_strength}",
        f"Cellular Network Type: {d.network_technology_connected}",
        f"Mobile Data Enabled: {_yes(d.data_enabled)}",
        f"Data Roaming Enabled: {_yes(d.roaming_enabled)}",
        f"Wi-Fi Radio: {_on(d.wifi_enabled)}",
        f"Wi-Fi Connected: {_yes(d.wifi_connected)}",
    ]
    if d.wifi_connected:
        lines.append(f"Connected Wi-Fi Network: {d.wifi_ssid}")
    return "\n".join(lines)


def check_network_mode_preference(state: TelecomState, args: NoArgs) -> str:
    return f"Network Mode Preference: {state.user_db.device.network_mode_preference}"


def run_speed_test(state: TelecomState, args: NoArgs) -> str:
    speed, label = speed_test(state.user_db)
    if speed is None:
        return f"Speed test failed: {label}."
    return f"Speed Test Result: {speed:.2f} Mbps ({label}). {SPEED_ADVICE[label]}"


def check_sim_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    return SIM_STATUS_TEXT["missing" if d.sim_card_missing else d.sim_card_status]


def check_data_restriction_status(state: TelecomState, args: NoArgs) -> str:
    if state.user_db.device.data_saver_mode:
        return "Data Saver mode is ON (limits data usage)."
    return "Data Saver mode is OFF."


def check_apn_settings(state: TelecomState, args: NoArgs) -> str:
    apn = state.user_db.device.active_apn_settings
    return (
        f"Current APN Name: {apn.apn_name or 'Not Set'}\n"
        f"MMSC URL (for picture messages): {apn.mmsc_url or 'Not Set'}\n"
        "(These are technical settings, usually best left unchanged.)"
    )


def check_wifi_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    if not d.wifi_enabled:
        return "Wi-Fi is turned OFF."
    if d.wifi_connected:
        return f"Wi-Fi is ON and connected to '{d.wifi_ssid}'. Signal strength: {d.wifi_signal_strength}."
    return "Wi-Fi is ON but not connected to any network."


def check_wifi_calling_status(state: TelecomState, args: NoArgs) -> str:
    return f"Wi-Fi Calling is currently turned {_on(state.user_db.device.wifi_calling_enabled)}."


def check_vpn_status(state: TelecomState, args: NoArgs) -> str:
    d = state.user_db.device
    if d.vpn_connected:
        if d.vpn_details is None:
            return "VPN is ON and connected (no specific details available)."
        return f"VPN is ON and connected. Details: {_vpn_details_text(d.vpn_details)}"
    if d.vpn_enabled_setting:
        return "VPN is turned ON in settings, but currently not connected."
    return "VPN is turned OFF."


def _vpn_details_text(details: VpnDetails) -> str:
    """The details as τ²-bench prints them: a Python dict, the performance shown as its enum member."""
    level = details.server_performance
    return (
        f"{{'server_address': {details.server_address!r}, 'protocol': {details.protocol!r}, "
        f"'server_performance': <PerformanceLevel.{level.upper()}: {level!r}>}}"
    )


def check_installed_apps(state: TelecomState, args: NoArgs) -> str:
    return "The following apps are installed on the phone: " + ", ".join(state.user_db.device.app_statuses)


def _granted(state: TelecomState, app_name: Any) -> list[str] | None:
    """The permissions an app holds, in τ²-bench's order; None when no such app is installed."""
    app = state.user_db.device.app_statuses.get(app_name)
    if app is None:
        return None
    return [p for p in PERMISSIONS if getattr(app.permissions, p)]


def check_app_status(state: TelecomState, args: AppArgs) -> str:
    granted = _granted(state, args.app_name)
    if granted is None:
        return f"App '{args.app_name}' not found on this phone."
    if not granted:
        return f"Status for App: {args.app_name}\n - Permissions: None granted."
    return "\n".join([f"Status for App: {args.app_name}", " - Permissions Granted:", *(f"   - {p}" for p in granted)])


def check_app_permissions(state: TelecomState, args: AppArgs) -> str:
    granted = _granted(state, args.app_name)
    if granted is None:
        return f"App '{args.app_name}' not found on this phone."
    if not granted:
        return f"App '{args.app_name}' currently has no permissions granted."
    return f"App '{args.app_name}' has permission for: {', '.join(granted)}."


def can_send_mms(state: TelecomState, args: NoArgs) -> str:
    if can_send_mms_now(state.user_db):
        return "Your messaging app can send MMS messages."
    return "Your messaging app cannot send MMS messages."


def check_payment_request(state: TelecomState, args: NoArgs) -> str:
    request = state.user_db.surroundings.payment_request
    if request is None:
        return "No payment request has been made."
    return f"You have a payment request for bill {request.bill_id} of {request.amount_due} USD."


# ----------------------------------------------------------------------------- the table


def _user(
    name: str, kind: str, args: type[BaseModel], run: Callable[..., Any], description: str, touches=(), raw_args=None
) -> Tool:
    return Tool(name, kind, args, run, description, touches=touches, requestor="user", raw_args=raw_args)  # type: ignore[arg-type]


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
    # neither argument is ever stored: a mistyped one finds no app or fails at `lower`, as there
    _user("grant_app_permission", "write", PermissionArgs, grant_app_permission, "Grant an app a permission (sms, storage, phone or network).",
          raw_args=frozenset({"app_name", "permission"})),
    _user("can_send_mms", "read", NoArgs, can_send_mms, "Whether the phone can send an MMS message now."),
    _user("reboot_device", "write", NoArgs, reboot_device, "Restart the phone."),
    _user("check_payment_request", "read", NoArgs, check_payment_request, "The carrier's payment request on the phone, if any."),
    # Paying changes the bill in the carrier's records at the next sync: every bill read goes stale.
    _user("make_payment", "write", NoArgs, make_payment, "Pay the carrier's payment request shown on the phone.", touches=("bills.*",)),
]
