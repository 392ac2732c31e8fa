"""The telecom databases: the carrier's records (agent side) and the customer's phone (user side).

Both follow τ²-bench's telecom schema field for field and in declaration order (tau2-compat §4.1,
§4.2), so a τ²-bench `db.toml` / `user_db.toml` loads unchanged and digests the same. Every record
is strict (unknown keys are an error); values are still coerced the lax way (an int for a float
field becomes a float), as in the benchmark. Dates stay `date` / `datetime` objects so the digest
writes them as `YYYY-MM-DD` / `YYYY-MM-DD HH:MM:SS`.

`TelecomState` is the environment's db object: one container for both databases, because in dual
control every tool call (agent or customer) may change either side through the sync step.
"""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----------------------------------------------------------------------------- agent database

DeviceType = Literal["phone", "router", "tablet", "watch", "other"]
LineStatus = Literal["Active", "Suspended", "Pending Activation", "Closed"]
BillStatus = Literal["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"]
AccountStatus = Literal["Active", "Suspended", "Pending Verification", "Closed"]
PaymentMethodType = Literal["Credit Card", "Debit Card", "PayPal"]


class Plan(Strict):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class Device(Strict):
    device_id: str
    device_type: DeviceType
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: dt.datetime | None = None
    last_esim_transfer_date: dt.datetime | None = None


class Line(Strict):
    line_id: str
    phone_number: str
    status: LineStatus = "Pending Activation"
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: dt.date | None = None
    last_plan_change_date: dt.date | None = None
    last_sim_replacement_date: dt.date | None = None
    suspension_start_date: dt.date | None = None


class LineItem(Strict):
    description: str
    amount: float
    date: dt.date
    item_type: str


class Bill(Strict):
    bill_id: str
    customer_id: str
    period_start: dt.date
    period_end: dt.date
    issue_date: dt.date
    total_due: float
    due_date: dt.date
    line_items: list[LineItem] = Field(default_factory=list)
    status: BillStatus = "Draft"


class Address(Strict):
    street: str
    city: str
    state: str
    zip_code: str


class PaymentMethod(Strict):
    method_type: PaymentMethodType
    account_number_last_4: str
    expiration_date: str  # MM/YYYY


class Customer(Strict):
    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: AccountStatus = "Pending Verification"
    payment_methods: list[PaymentMethod] = Field(default_factory=list)
    line_ids: list[str] = Field(default_factory=list)
    bill_ids: list[str] = Field(default_factory=list)
    # τ²-bench's default is the *date* 2025-01-01 (not a datetime); defaults are not validated,
    # so it stays a date and digests as `2025-01-01`, as in the benchmark.
    created_at: dt.datetime = dt.date(2025, 1, 1)  # type: ignore[assignment]
    last_extension_date: dt.date | None = None
    goodwill_credit_used_this_year: float = 0.0


class TelecomDB(Strict):
    plans: list[Plan]
    customers: list[Customer]
    lines: list[Line]
    bills: list[Bill]
    devices: list[Device]


# ----------------------------------------------------------------------------- user (device) database

SimStatus = Literal["active", "missing", "locked_pin", "locked_puk"]
Signal = Literal["none", "poor", "fair", "good", "excellent"]
Technology = Literal["none", "2G", "3G", "4G", "5G"]
ConnectionStatus = Literal["connected", "searching", "no_service", "emergency_only"]
NetworkMode = Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]
VpnPerformance = Literal["unknown", "poor", "fair", "good", "excellent"]
RadioTechnology = Literal["2G", "3G", "4G", "5G"]

NETWORK_MODES: tuple[str, ...] = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
PERMISSIONS: tuple[str, ...] = ("sms", "storage", "phone", "network")


class APNName(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(Strict):
    # The customer builds these from any object (`set_apn_settings`): an enum, so a bad name fails
    # with τ²-bench's own validation message; stored as its plain value.
    model_config = ConfigDict(extra="forbid", use_enum_values=True)

    apn_name: APNName = "internet"  # type: ignore[assignment]
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


class VpnDetails(Strict):
    server_address: str | None = None
    protocol: str | None = None
    server_performance: VpnPerformance = "unknown"


class AppPermissions(Strict):
    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


class AppStatus(Strict):
    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(
            app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)
        ),
        "browser": AppStatus(app_name="browser", permissions=AppPermissions(network=True, storage=True)),
    }


class PhoneDevice(Strict):
    sim_card_status: SimStatus = "active"
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: Signal = "good"
    network_technology_connected: Technology = "5G"
    network_connection_status: ConnectionStatus = "connected"
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkMode = "4g_5g_preferred"
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: Signal = "none"
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps)


def _default_signals() -> dict[RadioTechnology, Signal]:
    return {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}


class PaymentRequest(Strict):
    bill_id: str
    amount_due: float
    paid: bool = False


class Surroundings(Strict):
    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[RadioTechnology, Signal] = Field(default_factory=_default_signals)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


class TelecomUserDB(Strict):
    device: PhoneDevice = Field(default_factory=PhoneDevice)
    surroundings: Surroundings = Field(default_factory=Surroundings)
    # How fast the VPN server `connect_vpn` connects to is. Not a field (not in the digest): in
    # τ²-bench it is the toolkit's one VPN profile, which the `break_vpn` set-up degrades for good.
    _vpn_server_performance: VpnPerformance = PrivateAttr("excellent")

    @property
    def vpn_server_performance(self) -> VpnPerformance:
        return self._vpn_server_performance

    @vpn_server_performance.setter
    def vpn_server_performance(self, value: VpnPerformance) -> None:
        self._vpn_server_performance = value


# ----------------------------------------------------------------------------- the environment's db


class TelecomState(Strict):
    """Both sides of a telecom session: what the carrier records and what the phone shows."""

    agent_db: TelecomDB
    user_db: TelecomUserDB = Field(default_factory=TelecomUserDB)


# Maps keyed by their records' own ids: a load whose key names another record is refused. The
# carrier's records are lists (τ²-bench's format), so only the phone's apps are keyed.
KEYED: tuple[tuple[str, str], ...] = (("user_db.device.app_statuses", "app_name"),)
