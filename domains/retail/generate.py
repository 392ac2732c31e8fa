"""Seeded generator of the retail database (`python -m ledger_tui.domains.retail.generate` rewrites db.json).

The data is this project's own, sized like τ²-bench's retail store: 50 product types with many
variants each, 500 customers and 1,000 orders spread over every order status. The output is the
benchmark's on-disk format (orders omit the seven optional fields), and the same seed always gives
the same bytes: one `random.Random(seed)` drives every choice, and nothing iterates a set.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

SEED = 20240601
N_USERS = 500
N_ORDERS = 1000
OUT = Path(__file__).with_name("db.json")

# name, base price, option name -> values
CATALOG: list[tuple[str, float, dict[str, list[str]]]] = [
    ("T-Shirt", 24.0, {"color": ["black", "white", "navy", "red", "heather grey", "olive"], "size": ["S", "M", "L", "XL", "XXL"], "material": ["cotton", "organic cotton", "polyester blend"]}),
    ("Running Shoes", 110.0, {"size": ["7", "8", "9", "10", "11", "12"], "color": ["black", "white", "coral", "blue"], "sole": ["road", "trail"]}),
    ("Hiking Boots", 165.0, {"size": ["7", "8", "9", "10", "11", "12"], "material": ["leather", "synthetic"], "waterproof": ["yes", "no"]}),
    ("Backpack", 75.0, {"color": ["black", "forest green", "navy", "sand"], "capacity": ["18L", "25L", "32L"], "material": ["nylon", "canvas", "recycled polyester"], "compartment": ["laptop sleeve", "hydration pocket", "camera insert"]}),
    ("Water Bottle", 22.0, {"capacity": ["500ml", "750ml", "1000ml"], "material": ["stainless steel", "glass", "BPA-free plastic"], "color": ["teal", "black", "white", "orange"]}),
    ("Drip Coffee Maker", 89.0, {"capacity": ["4 cups", "8 cups", "12 cups"], "color": ["black", "white", "brushed steel"], "carafe": ["glass", "thermal"]}),
    ("Espresso Machine", 420.0, {"pressure": ["9 bar", "15 bar", "19 bar"], "capacity": ["1L", "1.5L", "2L"], "type": ["manual", "semi-automatic", "capsule"]}),
    ("Electric Kettle", 45.0, {"capacity": ["1L", "1.5L", "1.7L"], "material": ["glass", "stainless steel", "plastic"], "color": ["white", "black", "copper"]}),
    ("Countertop Blender", 120.0, {"jar capacity": ["1L", "1.5L", "2L"], "motor power": ["600W", "900W", "1400W"], "jar material": ["glass", "Tritan"]}),
    ("Air Fryer", 130.0, {"capacity": ["3 quarts", "5 quarts", "7 quarts"], "controls": ["dial", "touchscreen"], "color": ["black", "white", "sage"]}),
    ("Laptop", 1150.0, {"screen size": ["13-inch", "14-inch", "16-inch"], "processor": ["8-core", "10-core", "12-core"], "memory": ["16GB", "32GB"], "storage": ["512GB SSD", "1TB SSD", "2TB SSD"], "color": ["silver", "graphite"]}),
    ("Tablet", 480.0, {"screen size": ["8-inch", "11-inch", "13-inch"], "storage": ["64GB", "128GB", "256GB"], "color": ["silver", "slate", "rose"], "connectivity": ["Wi-Fi", "Wi-Fi + LTE"]}),
    ("Smart Watch", 260.0, {"case size": ["40mm", "44mm"], "color": ["black", "silver", "gold"], "band": ["silicone", "leather", "steel link"], "display": ["LCD", "AMOLED"]}),
    ("Wireless Earbuds", 140.0, {"color": ["black", "white", "midnight blue"], "battery life": ["5 hours", "7 hours", "9 hours"], "water resistance": ["none", "IPX4", "IPX7"]}),
    ("Over-Ear Headphones", 220.0, {"connectivity": ["wired", "wireless"], "noise cancelling": ["yes", "no"], "color": ["black", "cream", "burgundy"]}),
    ("Bluetooth Speaker", 95.0, {"color": ["black", "blue", "red", "stone"], "battery life": ["10 hours", "16 hours", "24 hours"], "water resistance": ["yes", "no"]}),
    ("Mirrorless Camera", 1320.0, {"resolution": ["24MP", "33MP", "45MP"], "kit lens": ["body only", "24-70mm", "18-135mm"], "color": ["black", "silver"]}),
    ("Action Camera", 310.0, {"resolution": ["1080p", "4K", "5.3K"], "waterproof": ["yes", "no"], "mount": ["helmet", "chest", "handlebar"]}),
    ("Mechanical Keyboard", 130.0, {"switch type": ["linear", "tactile", "clicky"], "backlight": ["none", "white", "RGB"], "layout": ["compact", "tenkeyless", "full size"]}),
    ("Wireless Mouse", 55.0, {"color": ["black", "white", "grey"], "sensor": ["optical", "laser"], "grip": ["ambidextrous", "right-handed", "vertical"]}),
    ("Computer Monitor", 340.0, {"screen size": ["24-inch", "27-inch", "32-inch"], "resolution": ["1080p", "1440p", "4K"], "refresh rate": ["60Hz", "144Hz", "165Hz"]}),
    ("External Hard Drive", 95.0, {"capacity": ["1TB", "2TB", "4TB", "6TB"], "interface": ["USB 3.0", "USB-C", "Thunderbolt"], "color": ["black", "silver", "blue"]}),
    ("E-Reader", 150.0, {"screen size": ["6-inch", "7-inch", "10-inch"], "storage": ["8GB", "16GB", "32GB"], "connectivity": ["Wi-Fi", "Wi-Fi + LTE"]}),
    ("Desk Lamp", 42.0, {"color": ["black", "white", "brass"], "brightness": ["low", "medium", "high"], "power source": ["USB", "AC adapter", "battery"]}),
    ("Office Chair", 310.0, {"material": ["mesh", "leather", "fabric"], "color": ["black", "grey", "navy", "red"], "armrest": ["fixed", "adjustable", "none"], "backrest height": ["standard", "high-back"]}),
    ("Standing Desk", 520.0, {"top size": ["48x24 in", "60x30 in", "72x30 in"], "top material": ["bamboo", "walnut laminate", "white laminate"], "frame color": ["black", "white", "silver"]}),
    ("Bookshelf", 180.0, {"material": ["oak", "pine", "metal"], "color": ["natural", "white", "black"], "height": ["3 ft", "4 ft", "5 ft", "6 ft"]}),
    ("Garden Hose", 38.0, {"length": ["25ft", "50ft", "100ft"], "material": ["rubber", "vinyl", "latex"], "color": ["green", "blue", "black"]}),
    ("Yoga Mat", 35.0, {"thickness": ["4mm", "6mm", "8mm"], "material": ["PVC", "TPE", "natural rubber"], "color": ["lavender", "ocean blue", "charcoal", "moss"]}),
    ("Adjustable Dumbbells", 280.0, {"weight range": ["5-25 lbs", "10-50 lbs", "10-90 lbs"], "handle": ["knurled steel", "rubber grip"], "stand": ["none", "included"]}),
    ("Bicycle", 780.0, {"frame size": ["small", "medium", "large"], "color": ["black", "red", "teal", "white"], "type": ["road", "mountain", "hybrid"]}),
    ("Cycling Helmet", 85.0, {"size": ["S", "M", "L"], "color": ["black", "white", "red", "blue"], "ventilation": ["low", "medium", "high"]}),
    ("Camping Tent", 240.0, {"capacity": ["2-person", "4-person", "6-person"], "color": ["green", "orange", "grey"], "season": ["3-season", "4-season"]}),
    ("Sleeping Bag", 110.0, {"temperature rating": ["20 degrees", "35 degrees", "50 degrees"], "length": ["regular", "long"], "fill": ["down", "synthetic"]}),
    ("Portable Grill", 190.0, {"fuel": ["charcoal", "propane", "electric"], "cooking area": ["180 sq in", "240 sq in", "320 sq in"], "color": ["black", "red"]}),
    ("Vacuum Cleaner", 260.0, {"type": ["upright", "canister", "robotic"], "bin": ["bagged", "bagless"], "feature": ["HEPA filter", "pet hair brush", "cordless"]}),
    ("Air Purifier", 210.0, {"room size": ["small", "medium", "large"], "filter": ["HEPA", "HEPA + carbon", "ionic"], "feature": ["night mode", "air quality sensor", "app control"]}),
    ("Desk Fan", 48.0, {"size": ["6-inch", "9-inch", "12-inch"], "color": ["white", "black", "mint"], "power source": ["USB", "AC adapter", "battery"]}),
    ("Cookware Set", 230.0, {"material": ["stainless steel", "nonstick aluminum", "cast iron"], "piece count": ["5", "8", "12"], "lid": ["glass", "steel"]}),
    ("Chef Knife Set", 160.0, {"blade": ["stainless steel", "carbon steel", "ceramic"], "piece count": ["3", "6", "9"], "handle": ["wood", "resin", "steel"]}),
    ("Wall Clock", 40.0, {"diameter": ["10 inches", "12 inches", "16 inches"], "color": ["black", "white", "walnut"], "movement": ["quartz", "silent sweep"]}),
    ("Pet Bed", 60.0, {"size": ["small", "medium", "large", "extra large"], "material": ["memory foam", "polyester fill", "orthopedic foam"], "color": ["grey", "brown", "beige"]}),
    ("Jigsaw Puzzle", 24.0, {"pieces": ["500", "1000", "1500", "2000"], "theme": ["animals", "landscapes", "fine art", "maps"], "difficulty": ["easy", "medium", "hard"]}),
    ("Board Game", 45.0, {"players": ["2", "2-4", "2-6"], "age group": ["kids", "family", "adult"], "style": ["strategy", "party", "cooperative"]}),
    ("Sunglasses", 130.0, {"frame color": ["black", "tortoise", "gold", "silver"], "lens color": ["grey", "brown", "green"], "lens type": ["polarized", "non-polarized"]}),
    ("Perfume", 95.0, {"scent family": ["citrus", "floral", "woody", "amber"], "size": ["30ml", "50ml", "100ml"], "concentration": ["eau de toilette", "eau de parfum"]}),
    ("Skateboard", 90.0, {"deck material": ["maple", "bamboo", "plastic"], "length": ["28 inch", "31 inch", "34 inch"], "design": ["plain", "graphic", "custom"]}),
    ("Fountain Pen", 70.0, {"nib": ["extra fine", "fine", "medium", "broad"], "body": ["resin", "brass", "aluminum"], "color": ["black", "blue", "green", "burgundy"]}),
    ("Electric Toothbrush", 80.0, {"color": ["white", "black", "blue", "pink"], "modes": ["2 modes", "4 modes", "6 modes"], "charging": ["stand", "travel case"]}),
    ("Luggage Set", 290.0, {"piece count": ["2-piece", "3-piece", "4-piece"], "color": ["black", "navy", "red", "silver"], "shell": ["hardshell", "softshell"]}),
]

FIRST_NAMES = (
    "Yusuf Mia Noah Olivia Liam Aisha Mateo Sofia Ethan Amara Lucas Chloe Omar Isabella Raj Emma "
    "Daiki Fatima Ivan Lena Kwame Ana Mohamed Yara Chen Priya Diego Grace Arjun Hana Samuel Zoe "
    "Lei Nora Aarav Ingrid Mason Ava Hiro Leila Juan Ella Ahmed Maya Tomas Sara Kai Evelyn Mei "
    "Anya Harper Elijah Lucia James Sophia Fernando Nia Anders Isla Ravi Jasmine Emil Clara "
    "Yara Malik Rosa Sven Aylin Daniel Freya Amir Camila Henrik Mila Jonas Layla Mustafa Ruby"
).split()
LAST_NAMES = (
    "Rossi Li Brown Garcia Nguyen Kim Silva Khan Muller Johansson Patel Ito Novak Okafor Lopez "
    "Santos Moreau Davis Wilson Ahmed Kowalski Hernandez Smith Sato Anderson Martin Thomas Lee "
    "Hansen Gonzalez Moore Taylor Jackson White Harris Clark Lewis Walker Young Allen Wright "
    "Scott Green Baker Adams Nelson Hill Campbell Mitchell Roberts Carter Phillips Evans Turner "
    "Torres Parker Collins Edwards Stewart Morris Murphy Cook Rogers Morgan Peterson Cooper Reed "
    "Bailey Bell Gomez Kelly Howard Ward Cox Diaz Richardson Wood Watson Brooks Bennett Gray"
).split()
STREETS = (
    "Maple Street|Oak Avenue|Cedar Lane|Elm Street|Pine Road|Willow Drive|Lakeview Drive|Hillcrest "
    "Road|Sunset Boulevard|River Road|Park Avenue|Highland Avenue|Chestnut Street|Spruce Street|Main "
    "Street|Broadway|Washington Avenue|Lincoln Street|Jefferson Street|Franklin Avenue|Walnut Street|"
    "Cherry Lane|Meadow Lane|Forest Avenue|Harbor View|Canyon Road|Mill Street|Church Street|"
    "College Avenue|Grove Street"
).split("|")
# city, state, zip prefix (three digits; the generator adds two)
CITIES: list[tuple[str, str, str]] = [
    ("Seattle", "WA", "981"), ("Portland", "OR", "972"), ("San Francisco", "CA", "941"),
    ("Los Angeles", "CA", "900"), ("San Diego", "CA", "921"), ("Phoenix", "AZ", "850"),
    ("Denver", "CO", "802"), ("Austin", "TX", "787"), ("Houston", "TX", "770"), ("Dallas", "TX", "752"),
    ("San Antonio", "TX", "782"), ("Chicago", "IL", "606"), ("Minneapolis", "MN", "554"),
    ("Detroit", "MI", "482"), ("Columbus", "OH", "432"), ("Indianapolis", "IN", "462"),
    ("Nashville", "TN", "372"), ("Atlanta", "GA", "303"), ("Charlotte", "NC", "282"),
    ("Miami", "FL", "331"), ("Orlando", "FL", "328"), ("Tampa", "FL", "336"), ("Boston", "MA", "021"),
    ("New York", "NY", "100"), ("Philadelphia", "PA", "191"), ("Pittsburgh", "PA", "152"),
    ("Baltimore", "MD", "212"), ("Washington", "DC", "200"), ("Las Vegas", "NV", "891"),
    ("Salt Lake City", "UT", "841"), ("Albuquerque", "NM", "871"), ("Milwaukee", "WI", "532"),
    ("Kansas City", "MO", "641"), ("Omaha", "NE", "681"), ("Raleigh", "NC", "276"),
    ("Richmond", "VA", "232"), ("Louisville", "KY", "402"), ("New Orleans", "LA", "701"),
]
CARD_BRANDS = ["visa", "mastercard", "amex", "discover"]
# Weighted statuses: every status appears, delivered and pending most often.
STATUSES = [
    ("delivered", 33), ("pending", 25), ("processed", 15), ("cancelled", 10),
    ("pending (item modified)", 6), ("exchange requested", 5), ("return requested", 6),
]
SHIPPED = {"processed", "delivered", "exchange requested", "return requested"}


class _Ids:
    """Unique numeric ids of a fixed width, drawn from the shared generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: dict[str, None] = {}

    def digits(self, width: int) -> str:
        while True:
            value = str(self.rng.randrange(10 ** (width - 1), 10**width))
            if value not in self.used:
                self.used[value] = None
                return value


def _products(rng: random.Random, ids: _Ids) -> dict[str, Any]:
    products: dict[str, Any] = {}
    for name, base, options in CATALOG:
        product_id = ids.digits(10)
        combos = list(itertools.product(*options.values()))
        count = min(len(combos), rng.randint(6, 18))
        chosen = sorted(rng.sample(range(len(combos)), count))
        variants: dict[str, Any] = {}
        for index in chosen:
            combo = combos[index]
            # Options further down each list cost a little more; then a few percent of noise.
            steps = sum(values.index(v) for values, v in zip(options.values(), combo))
            price = base * (1 + 0.06 * steps) * rng.uniform(0.93, 1.07)
            item_id = ids.digits(10)
            variants[item_id] = {
                "item_id": item_id,
                "options": dict(zip(options.keys(), combo)),
                "available": rng.random() < 0.72,
                "price": round(price, 2),
            }
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    return products


def _address(rng: random.Random) -> dict[str, str]:
    city, state, prefix = rng.choice(CITIES)
    second = rng.choice(["", "", "", f"Suite {rng.randint(100, 999)}", f"Apt {rng.randint(1, 40)}"])
    return {
        "address1": f"{rng.randint(10, 9999)} {rng.choice(STREETS)}",
        "address2": second,
        "city": city,
        "country": "USA",
        "state": state,
        "zip": f"{prefix}{rng.randint(0, 99):02d}",
    }


def _payment_methods(rng: random.Random, ids: _Ids) -> dict[str, Any]:
    kinds = rng.sample(["credit_card", "gift_card", "paypal"], rng.choice([1, 1, 2, 2, 2, 3]))
    if rng.random() < 0.15 and "credit_card" in kinds:
        kinds.append("credit_card")  # a second card
    methods: dict[str, Any] = {}
    for kind in kinds:
        method_id = f"{kind}_{ids.digits(7)}"
        if kind == "credit_card":
            methods[method_id] = {
                "source": kind, "id": method_id, "brand": rng.choice(CARD_BRANDS),
                "last_four": f"{rng.randint(0, 9999):04d}",
            }
        elif kind == "gift_card":
            methods[method_id] = {"source": kind, "id": method_id, "balance": float(rng.randint(0, 300))}
        else:
            methods[method_id] = {"source": kind, "id": method_id}
    return methods


def _users(rng: random.Random, ids: _Ids) -> dict[str, Any]:
    users: dict[str, Any] = {}
    emails: dict[str, None] = {}
    while len(users) < N_USERS:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        user_id = f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
        email = f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com"
        if user_id in users or email in emails:
            continue
        emails[email] = None
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": _address(rng),
            "email": email,
            "payment_methods": _payment_methods(rng, ids),
            "orders": [],
        }
    return users


def _order(rng: random.Random, ids: _Ids, order_id: str, user: dict[str, Any], products: list[Any]) -> dict[str, Any]:
    items = []
    for product in rng.sample(products, rng.choice([1, 1, 2, 2, 3, 3, 4, 5])):
        variant = rng.choice(list(product["variants"].values()))
        items.append({
            "name": product["name"], "product_id": product["product_id"], "item_id": variant["item_id"],
            "price": variant["price"], "options": dict(variant["options"]),
        })
    if rng.random() < 0.04:
        items.append(dict(items[0], options=dict(items[0]["options"])))  # the same item bought twice
    status = rng.choices([s for s, _ in STATUSES], weights=[w for _, w in STATUSES])[0]
    fulfillments = []
    if status in SHIPPED:
        item_ids = [i["item_id"] for i in items]
        if len(item_ids) > 2 and rng.random() < 0.3:
            cut = rng.randint(1, len(item_ids) - 1)
            fulfillments = [
                {"tracking_id": [ids.digits(12)], "item_ids": item_ids[:cut]},
                {"tracking_id": [ids.digits(12)], "item_ids": item_ids[cut:]},
            ]
        else:
            fulfillments = [{"tracking_id": [ids.digits(12)], "item_ids": item_ids}]
    method_id = rng.choice(list(user["payment_methods"]))
    total = round(sum(i["price"] for i in items), 2)
    history = [{"transaction_type": "payment", "amount": total, "payment_method_id": method_id}]
    if status == "cancelled":
        history.append({"transaction_type": "refund", "amount": total, "payment_method_id": method_id})
    address = user["address"] if rng.random() < 0.9 else _address(rng)
    return {
        "order_id": order_id, "user_id": user["user_id"], "address": dict(address), "items": items,
        "status": status, "fulfillments": fulfillments, "payment_history": history,
    }


def generate(seed: int = SEED) -> dict[str, Any]:
    """The whole database as plain JSON, in τ²-bench's on-disk format."""
    rng = random.Random(seed)
    ids = _Ids(rng)
    products = _products(rng, ids)
    users = _users(rng, ids)
    owners = list(users) + [rng.choice(list(users)) for _ in range(N_ORDERS - len(users))]
    rng.shuffle(owners)
    catalog = list(products.values())
    orders: dict[str, Any] = {}
    for owner in owners:
        order_id = "#W" + ids.digits(7)
        orders[order_id] = _order(rng, ids, order_id, users[owner], catalog)
        users[owner]["orders"].append(order_id)
    return {"products": products, "users": users, "orders": orders}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def main() -> None:
    OUT.write_text(dumps(generate()), encoding="utf-8")


if __name__ == "__main__":
    main()
