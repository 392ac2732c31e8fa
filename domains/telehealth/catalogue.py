"""The telehealth catalogues the generator draws from: conditions, medications, interactions, suppliers, devices, names.

They are written for this project and kept apart from `generate.py` so that the data a patient can
have (a condition's ICD-10 code, its medications, visit reasons and monitoring device) reads as one
table, and the generator's module is only the drawing. Changing a catalogue changes the generated
db.json: regenerate it with `python -m ledger_tui.domains.telehealth.generate`.
"""

from __future__ import annotations

# condition: (ICD-10 code, description, specialty, medications, visit reasons, monitoring device)
CONDITIONS: dict[str, tuple[str, str, str, list[str], list[str], str | None]] = {
    "hypertension": ("I10", "Essential (primary) hypertension", "cardiology",
                     ["lisinopril", "amlodipine", "losartan", "hydrochlorothiazide"],
                     ["blood pressure follow-up", "hypertension review"], "blood pressure cuff"),
    "type 2 diabetes": ("E11.9", "Type 2 diabetes mellitus without complications", "endocrinology",
                        ["metformin", "glipizide", "sitagliptin", "empagliflozin"],
                        ["diabetes follow-up", "blood sugar review"], "glucose meter"),
    "hyperlipidemia": ("E78.5", "Hyperlipidemia, unspecified", "cardiology",
                       ["atorvastatin", "simvastatin", "rosuvastatin"], ["cholesterol check"], None),
    "hypothyroidism": ("E03.9", "Hypothyroidism, unspecified", "endocrinology",
                       ["levothyroxine"], ["thyroid follow-up"], None),
    "asthma": ("J45.909", "Unspecified asthma, uncomplicated", "pulmonology",
               ["albuterol", "fluticasone"], ["asthma review", "wheezing"], "pulse oximeter"),
    "copd": ("J44.9", "Chronic obstructive pulmonary disease, unspecified", "pulmonology",
             ["tiotropium", "albuterol"], ["COPD follow-up", "shortness of breath"], "pulse oximeter"),
    "depression": ("F32.9", "Major depressive disorder, single episode, unspecified", "psychiatry",
                   ["sertraline", "fluoxetine", "bupropion"], ["depression follow-up", "medication management"], None),
    "anxiety": ("F41.1", "Generalized anxiety disorder", "psychiatry",
                ["escitalopram", "buspirone"], ["anxiety follow-up", "panic attacks"], None),
    "atrial fibrillation": ("I48.91", "Unspecified atrial fibrillation", "cardiology",
                            ["warfarin", "apixaban", "metoprolol"],
                            ["atrial fibrillation follow-up", "palpitations"], "ECG patch"),
    "gerd": ("K21.9", "Gastro-esophageal reflux disease without esophagitis", "gastroenterology",
             ["omeprazole", "pantoprazole"], ["acid reflux", "heartburn"], None),
    "migraine": ("G43.909", "Migraine, unspecified, not intractable", "neurology",
                 ["sumatriptan", "topiramate"], ["migraine follow-up", "headache"], None),
    "eczema": ("L30.9", "Dermatitis, unspecified", "dermatology",
               ["triamcinolone cream", "hydrocortisone cream"], ["eczema flare", "skin rash"], None),
    "acne": ("L70.0", "Acne vulgaris", "dermatology", ["tretinoin cream", "doxycycline"], ["acne treatment"], None),
    "osteoarthritis": ("M19.90", "Unspecified osteoarthritis, unspecified site", "primary_care",
                       ["naproxen", "ibuprofen", "meloxicam"], ["joint pain"], None),
    "insomnia": ("G47.00", "Insomnia, unspecified", "psychiatry", ["trazodone"], ["insomnia", "sleep problems"], None),
}
CONDITION_WEIGHTS = {
    "hypertension": 14, "type 2 diabetes": 10, "hyperlipidemia": 10, "hypothyroidism": 5, "asthma": 6,
    "copd": 3, "depression": 7, "anxiety": 7, "atrial fibrillation": 4, "gerd": 6, "migraine": 5,
    "eczema": 4, "acne": 3, "osteoarthritis": 7, "insomnia": 4,
}

# Short, general visits a primary care provider sees (reason, ICD-10 code, description).
GENERAL_VISITS = [
    ("annual physical", "Z00.00", "Encounter for general adult medical examination"),
    ("cough and sore throat", "J06.9", "Acute upper respiratory infection, unspecified"),
    ("flu symptoms", "J11.1", "Influenza with other respiratory manifestations"),
    ("back pain", "M54.50", "Low back pain, unspecified"),
    ("fatigue", "R53.83", "Other fatigue"),
    ("medication refill", "Z76.0", "Encounter for repeat prescription"),
]

TREATS: dict[str, list[str]] = {
    "primary_care": ["annual physical", "check-up", "cold", "flu", "cough", "sore throat", "fever", "hypertension",
                     "blood pressure", "diabetes", "cholesterol", "medication refill", "fatigue", "back pain",
                     "joint pain", "vaccination", "urinary symptoms"],
    "cardiology": ["chest pain", "palpitations", "atrial fibrillation", "arrhythmia", "heart failure", "hypertension",
                   "blood pressure", "cholesterol"],
    "endocrinology": ["diabetes", "blood sugar", "thyroid", "insulin", "hormone", "weight management"],
    "dermatology": ["rash", "acne", "eczema", "psoriasis", "mole check", "hair loss", "skin"],
    "psychiatry": ["depression", "anxiety", "panic attacks", "insomnia", "sleep problems", "mood", "ADHD",
                   "medication management"],
    "neurology": ["migraine", "headache", "seizure", "numbness", "tremor", "dizziness", "memory"],
    "gastroenterology": ["acid reflux", "heartburn", "GERD", "abdominal pain", "IBS", "constipation", "nausea"],
    "pulmonology": ["asthma", "COPD", "shortness of breath", "wheezing", "chronic cough", "sleep apnea"],
}

DOSAGES = {
    "lisinopril": "10 mg once daily", "amlodipine": "5 mg once daily", "losartan": "50 mg once daily",
    "hydrochlorothiazide": "25 mg once daily", "metformin": "500 mg twice daily", "glipizide": "5 mg once daily",
    "sitagliptin": "100 mg once daily", "empagliflozin": "10 mg once daily", "atorvastatin": "20 mg at bedtime",
    "simvastatin": "40 mg at bedtime", "rosuvastatin": "10 mg once daily", "levothyroxine": "50 mcg every morning",
    "albuterol": "90 mcg inhaler, 2 puffs as needed", "fluticasone": "110 mcg inhaler, 2 puffs twice daily",
    "tiotropium": "18 mcg inhaled once daily", "sertraline": "50 mg once daily", "fluoxetine": "20 mg once daily",
    "bupropion": "150 mg once daily", "escitalopram": "10 mg once daily", "buspirone": "10 mg twice daily",
    "warfarin": "5 mg once daily", "apixaban": "5 mg twice daily", "metoprolol": "25 mg twice daily",
    "omeprazole": "20 mg before breakfast", "pantoprazole": "40 mg once daily",
    "sumatriptan": "50 mg as needed for migraine", "topiramate": "25 mg twice daily",
    "triamcinolone cream": "0.1%, apply twice daily", "hydrocortisone cream": "1%, apply twice daily",
    "tretinoin cream": "0.025%, apply at night", "doxycycline": "100 mg once daily",
    "naproxen": "500 mg twice daily", "ibuprofen": "400 mg every 8 hours as needed",
    "meloxicam": "15 mg once daily", "trazodone": "50 mg at bedtime",
}
MEDICATIONS = list(DOSAGES)

INTERACTIONS = [
    ("warfarin", "naproxen", "major", True, "NSAIDs raise the bleeding risk of warfarin."),
    ("warfarin", "ibuprofen", "major", True, "NSAIDs raise the bleeding risk of warfarin."),
    ("warfarin", "meloxicam", "major", True, "NSAIDs raise the bleeding risk of warfarin."),
    ("apixaban", "naproxen", "major", True, "NSAIDs raise the bleeding risk of apixaban."),
    ("apixaban", "ibuprofen", "major", True, "NSAIDs raise the bleeding risk of apixaban."),
    ("warfarin", "fluoxetine", "major", True, "Fluoxetine can raise warfarin levels and bleeding risk."),
    ("warfarin", "sertraline", "moderate", True, "SSRIs add to the bleeding risk of warfarin."),
    ("sertraline", "sumatriptan", "moderate", True, "Combined serotonergic effect; risk of serotonin syndrome."),
    ("fluoxetine", "sumatriptan", "moderate", True, "Combined serotonergic effect; risk of serotonin syndrome."),
    ("escitalopram", "sumatriptan", "moderate", True, "Combined serotonergic effect; risk of serotonin syndrome."),
    ("sertraline", "trazodone", "moderate", False, "Additive serotonergic effect; usually managed with monitoring."),
    ("escitalopram", "trazodone", "moderate", False, "Additive serotonergic effect; usually managed with monitoring."),
    ("fluoxetine", "metoprolol", "moderate", False, "Fluoxetine can raise metoprolol levels; watch heart rate."),
    ("bupropion", "metoprolol", "moderate", False, "Bupropion can raise metoprolol levels; watch heart rate."),
    ("lisinopril", "naproxen", "moderate", False, "NSAIDs can blunt blood-pressure control and strain the kidneys."),
    ("lisinopril", "ibuprofen", "moderate", False, "NSAIDs can blunt blood-pressure control and strain the kidneys."),
    ("losartan", "ibuprofen", "moderate", False, "NSAIDs can blunt blood-pressure control and strain the kidneys."),
    ("amlodipine", "simvastatin", "moderate", False, "Keep simvastatin at or below 20 mg with amlodipine."),
    ("levothyroxine", "omeprazole", "minor", False, "Acid suppression can reduce levothyroxine absorption."),
    ("levothyroxine", "pantoprazole", "minor", False, "Acid suppression can reduce levothyroxine absorption."),
    ("hydrochlorothiazide", "topiramate", "moderate", False, "Higher risk of low potassium."),
    ("metformin", "topiramate", "minor", False, "Small added risk of metabolic acidosis."),
]

SUPPLIERS = [
    ("CareFirst Pharmacy Downtown", "retail pharmacy", 1, 0.85),
    ("Northside Community Pharmacy", "retail pharmacy", 1, 0.75),
    ("MedExpress Mail Order", "mail order", 4, 0.8),
    ("Harbor Health Pharmacy", "retail pharmacy", 1, 0.7),
    ("QuickScript Online", "mail order", 3, 0.65),
    ("Evergreen Specialty Pharmacy", "specialty pharmacy", 2, 0.45),
    ("Valley Drug Co.", "retail pharmacy", 1, 0.6),
    ("Sunrise 24h Pharmacy", "retail pharmacy", 1, 0.7),
]

DEVICE_MODELS = {
    "blood pressure cuff": ["Omron Evolv", "Withings BPM Connect"],
    "glucose meter": ["Contour Next One", "Accu-Chek Guide"],
    "pulse oximeter": ["Masimo MightySat", "Nonin 3230"],
    "ECG patch": ["Zio XT", "KardiaMobile 6L"],
    "weight scale": ["Withings Body+", "Renpho Elis 1"],
}

FIRST_NAMES = [
    "Amara", "Liam", "Sofia", "Noah", "Mei", "Diego", "Priya", "Ethan", "Fatima", "Lucas", "Hana", "Omar",
    "Grace", "Mateo", "Aisha", "Samuel", "Yuki", "Daniel", "Leila", "Jonah", "Chloe", "Ravi", "Isabella",
    "Kwame", "Elena", "Marcus", "Nadia", "Tomas", "Ingrid", "Hiro", "Camila", "Julian", "Zara", "Felix",
    "Ana", "Victor", "Mariam", "Owen", "Lucia", "Arjun", "Rosa", "Henry", "Keiko", "Andre", "Sienna",
    "Malik", "Freya", "Jamal", "Clara", "Tariq", "Olivia", "Bruno", "Nia", "Stefan", "Lena", "Kofi",
    "Maya", "Pedro", "Sana", "Gabriel", "Eva", "Ibrahim", "Alice", "Rafael", "Yara", "Connor", "Dina",
    "Matteo", "Nora", "Emeka", "Julia", "Hugo", "Layla", "Adrian", "Mira", "Santiago", "Ruth", "Theo",
]
LAST_NAMES = [
    "Okafor", "Nguyen", "Garcia", "Patel", "Kim", "Johansson", "Haddad", "Silva", "Cohen", "Mensah", "Rossi",
    "Tanaka", "Murphy", "Hernandez", "Ali", "Schmidt", "Dubois", "Kowalski", "Chen", "Adeyemi", "Novak",
    "Lopez", "Sato", "Brennan", "Ivanova", "Mahmoud", "Fischer", "Costa", "Walker", "Yilmaz", "Reyes",
    "Larsen", "Osei", "Moreau", "Bianchi", "Khan", "Park", "Santos", "Becker", "Nakamura", "Ortiz", "Hughes",
    "Petrov", "Asante", "Romero", "Lindqvist", "Rahman", "Bauer", "Castillo", "Ahmed", "Fernandes", "Wright",
    "Abara", "Vargas", "Ward", "Horvat", "Mwangi", "Jensen", "Torres", "Singh",
]
PROVIDER_NAMES = [
    ("Helen", "Park"), ("Samuel", "Adeyemi"), ("Maria", "Lindqvist"), ("Rajesh", "Iyer"), ("Claire", "Dupont"),
    ("Thomas", "Boateng"), ("Aiko", "Fujita"), ("Miguel", "Alvarez"), ("Sarah", "Goldberg"), ("Kenneth", "Oduya"),
    ("Ines", "Carvalho"), ("David", "Whitfield"), ("Leah", "Morgenstern"), ("Arash", "Karimi"), ("Beatriz", "Moreno"),
    ("Paul", "Okonkwo"), ("Yvonne", "Chang"), ("Hassan", "El-Amin"), ("Rebecca", "Stone"), ("Viktor", "Sorensen"),
    ("Nkechi", "Eze"), ("James", "Holloway"), ("Anjali", "Mehta"), ("Lukas", "Brandt"), ("Grace", "Achebe"),
    ("Oscar", "Nilsson"), ("Teresa", "Ruiz"), ("Daniel", "Abrams"), ("Farah", "Siddiqui"), ("Peter", "Lam"),
]
PROVIDER_SPECIALTIES = (
    ["primary_care"] * 8 + ["cardiology"] * 4 + ["endocrinology"] * 3 + ["dermatology"] * 3
    + ["psychiatry"] * 4 + ["neurology"] * 3 + ["gastroenterology"] * 2 + ["pulmonology"] * 3
)
DAY_PATTERNS = [
    ["08:00-12:00"], ["09:00-12:00", "13:00-16:00"], ["13:00-17:00"], ["08:30-11:30", "12:30-15:00"],
    ["10:00-14:00"], ["09:00-12:00", "14:00-17:00"],
]
CITIES = [
    ("Portland", "OR", "97"), ("Austin", "TX", "78"), ("Columbus", "OH", "43"), ("Madison", "WI", "53"),
    ("Raleigh", "NC", "27"), ("Tucson", "AZ", "85"), ("Providence", "RI", "02"), ("Boise", "ID", "83"),
    ("Richmond", "VA", "23"), ("Omaha", "NE", "68"),
]
STREETS = ["Maple Ave", "Oak St", "Cedar Ln", "Harbor Rd", "Elm St", "Hillcrest Dr", "Lakeview Blvd", "Birch Way",
           "Sunset Blvd", "Willow Ct", "River Rd", "Park Pl"]
PAYERS = ["Blue Horizon Health", "Evercare Mutual", "Summit Health Plan", "Medicare", "Medicaid", "Northstar Insurance"]
ALLERGIES = ["penicillin", "sulfa drugs", "latex", "codeine", "shellfish", "peanuts", "aspirin"]
EMAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example"]
