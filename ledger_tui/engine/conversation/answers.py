"""The closed reader: what a customer's reply to a confirmation card says, and nothing more.

A card asks one closed question ("Shall I go ahead?") about calls the system rendered itself, so
the reply is not interpreted, it is *recognized*: it is a yes only when every word of it is a plain
affirmation, a politeness, a filler, the card's own verb or a value the card shows ("Yes, please
cancel it", "Oui, allez-y", "Ja, bitte", "Sí, adelante, gracias"), in English, French, Spanish,
German, Italian or Portuguese. One word of anything else (a number, an id, an amount, a date not
on the card, a negation, a condition, a question, another request, a change of mind) and it is
not a yes. A reply made only of a refusal is a no; everything else is unclear. A long reply is
never a plain yes, so reading one costs little whatever its length.

Precision comes first: a misread yes runs a write the customer did not accept, a misread no costs
one more exchange. The tables are data; `answer_reading` is the one function that uses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import tokens, value_tokens

Answer = Literal["yes", "no", "unclear"]
MAX_CHARS = 300  # longer than any plain yes or no

YES = lx.phrases(
    # en
    "yes|yeah|yea|yep|yup|ya|y|sure|sure thing|ok|okay|okey|okie|k|kk|alright|all right|correct|that is correct|"
    "that is right|exactly|absolutely|definitely|certainly|of course|please do|do it|go ahead|"
    "go for it|proceed|please proceed|sounds good|sounds great|perfect|great|agreed|i agree|fine|that is fine|"
    "that works|works for me|affirmative|confirmed|i confirm|confirm|indeed|let us do it|lets do it|"
    "go on|that is what i want|please go ahead|no problem|not a problem|no worries|by all means|"
    "that is good|good|is perfect|is fine|is good|that is ok|that is okay|it is ok|it is fine|i accept|accepted|"
    "approved|i approve|very good|wonderful|excellent|yes indeed|you bet|go right ahead|carry on|"
    "sounds perfect|perfect thanks|that is perfect|aye|yes sir|confirm it|do so|do that|you can proceed|"
    "you may proceed|you can go ahead|you may go ahead|feel free|is ok|that is alright|fine by me|is right|"
    "are fine|are ok|righto|right o|sweet as|sounds about right|that is the one|works|done|deal|book it in|"
    "stick it on",
    # fr
    "oui|ouais|ouaip|ouep|d accord|dac|bien sur|volontiers|allez-y|allez y|vas-y|vas y|je confirme|confirme|"
    "c est correct|c est exact|exact|exactement|parfait|tout a fait|absolument|faites-le|faites le|"
    "procedez|veuillez proceder|c est bon|ca marche|entendu|certainement|avec plaisir|c est parfait|tres bien|"
    "je valide|valide|bien|ca me va|je veux bien|c est ca|effectivement|je suis d accord|pas de probleme|"
    "sans probleme|pas de souci|pas de soucis|aucun probleme|aucun souci|j accepte|c est beau|ok c est beau|"
    "ca me convient|impeccable|nickel|super|go|c est ok|pas de trouble|vous pouvez proceder|vous pouvez y aller|"
    "tu peux y aller|allez-y donc|fais-le|faites|proceder|continuez|vous pouvez continuer|carrement|banco|"
    "certain|envoye|me convient|c est tres bien|tres bien|ca roule|marche",
    # es
    "si|claro|vale|de acuerdo|adelante|confirmo|correcto|exacto|perfecto|por supuesto|hagalo|hazlo|"
    "proceda|procede|esta bien|dale|claro que si|desde luego|sin duda|listo|me parece bien|muy bien|bien|"
    "estoy de acuerdo|lo confirmo|sin problema|no hay problema|ningun problema|sin drama|acepto|genial|"
    "puede hacerlo|puede proceder|okey|sale|orale|va|de una|venga|me viene bien|esta perfecto|perfecto entonces|"
    "buenisimo|joya|sip|simon|confirmado|confirmada|andale|andale pues|esta ok|puede confirmar|haz|haga|hagan|"
    "hagalo nomas|dale nomas|puede seguir|puede continuar|adelante nomas|de acuerdo entonces|hecho|obvio|"
    "hagale|mandale|seguir|continuar|estan bien|me queda perfecto|me queda bien|esta bien asi",
    # de
    "ja|jawohl|jo|jup|jep|genau|einverstanden|ich bestatige|bestatige|bestatigt|richtig|korrekt|stimmt|gerne|gern|"
    "naturlich|sicher|klar|na klar|machen sie|machen sie das|machen sie es|mach das|mach ruhig|mach mal|"
    "passt|passt scho|das passt|das passt mir|passt mir|in ordnung|auf jeden fall|selbstverstandlich|alles klar|gut|"
    "sehr gut|geht klar|ja genau|das ist richtig|das stimmt|ja gerne|ich bin einverstanden|tun sie das|"
    "fuhren sie es durch|bitte sehr|prima|super|perfekt|ist perfekt|kein problem|gar kein problem|kein thema|"
    "akzeptiert|ich akzeptiere|okay|nur zu|bitte fortfahren|fortfahren|fahren sie fort|jo eh|eh passt|logo|"
    "mach|mach ma|mach es|machen|sie konnen fortfahren|konnen sie machen|ist ok|passt so|bestens|sind ok|"
    "sind in ordnung|ist gut|basst|basst scho|isch guet|guet|garn|gaern|so machen wir es|weitermachen|"
    "bestatige ich|bestatigen sie|so machen wir s|machen wir s|machen wir das|machen wir es",
    # it
    "si|certo|va bene|d accordo|daccordo|confermo|procedi|proceda|procedete|esatto|corretto|perfetto|e perfetto|"
    "assolutamente|certamente|vai|vai pure|fallo|fallo pure|lo faccia|faccia pure|volentieri|benissimo|"
    "senz altro|ottimo|va benissimo|mi va bene|mi sta bene|certo che si|lo confermo|sono d accordo|giusto|"
    "proceda pure|procedete pure|andate pure|nessun problema|non c e problema|accetto|bene|prego|daje|va ben|"
    "fai|fate|fai pure|fate pure|puo procedere|puoi procedere|potete procedere|ci mancherebbe|e ok|dai|"
    "confermato|confermata|vai tranquillo|vanno bene|affare fatto|jamme|va bbuono|vai col liscio|proseguire",
    # pt
    "sim|claro|pode|pode sim|confirmo|correto|certo|exato|exatamente|perfeito|esta perfeito|com certeza|"
    "tudo bem|esta bem|ta bem|ta bom|esta bom|va em frente|prossiga|pode prosseguir|faca favor de prosseguir|"
    "faca|faca isso|pode fazer|isso mesmo|combinado|fechado|fechou|pode ser|concordo|estou de acordo|de acordo|"
    "sem problema|nao tem problema|nao ha problema|nao ha problema nenhum|problema nenhum|aceito|pode continuar|"
    "otimo|esta otimo|beleza|bom|pode seguir|pode ir|pode avancar|manda ver|mandar ver|pode mandar ver|bora|show|"
    "pode confirmar|confirmado|confirmada|ta ok|esta ok|uhum|s|sim senhor|sim senhora|facam|pode mandar|"
    "forca|ta otimo|estao bem|esta otimo|prosseguir",
)

# Sarcastic agreement: a reply with one of these is never a plain yes.
DOUBT = lx.phrases(
    "yeah right|yeah yeah|oh sure|sure sure|oh great|oh perfect|oh wonderful|great idea|as if|"
    "mais bien sur|c est ca oui|ouais c est ca|come no|si come no|ja klar und|aham|sei sei|como no",
)

NO = lx.phrases(
    # en
    "no|nope|nah|no no|no thanks|no thank you|not now|not yet|do not|do not do it|do not do that|"
    "please do not|never mind|nevermind|stop|i do not want that|i do not want to|i changed my mind|"
    "i have changed my mind|cancel that|forget it|hold on|wait|not really|i would rather not|"
    "rather not|absolutely not|definitely not|certainly not|no way|negative|i decline|decline|"
    "i refuse|leave it|leave it as it is|do not proceed|do not go ahead|not at this time|no do not|"
    "do not touch it|do not cancel|do not cancel it|do not do anything",
    # fr
    "non|non merci|pas maintenant|pas encore|ne le faites pas|ne faites pas ca|surtout pas|attendez|"
    "j ai change d avis|laissez tomber|laissez|pas question|hors de question|certainement pas|"
    "absolument pas|je refuse|non non|n en faites rien|arretez|non surtout pas|jamais",
    # es
    "no|no gracias|ahora no|todavia no|no lo haga|no lo hagas|espere|espera|he cambiado de opinion|"
    "cambie de opinion|olvidelo|dejelo|dejalo|de ninguna manera|ni hablar|para nada|en absoluto|"
    "me niego|no no|no proceda|mejor no|ni loco|nunca",
    # de
    "nein|nein danke|jetzt nicht|noch nicht|nicht|tun sie das nicht|machen sie das nicht|warten sie|"
    "moment|ich habe es mir anders uberlegt|vergessen sie es|lassen sie es|lieber nicht|auf keinen fall|"
    "keinesfalls|ich lehne ab|nein nein|stopp|halt|no|noe|nee|niemals",
    # it
    "no|no grazie|non ora|non ancora|non lo faccia|non farlo|aspetti|aspetta|ho cambiato idea|"
    "lasci perdere|lascia perdere|lasci stare|assolutamente no|per niente|mi rifiuto|no no|meglio di no|"
    "non procedere|non proceda|per carita|mai",
    # pt
    "nao|nao obrigado|nao obrigada|agora nao|ainda nao|nao faca|nao faca isso|espere|espera|"
    "mudei de ideia|esquece|esqueca|deixa|deixe|de jeito nenhum|nem pensar|de forma alguma|me recuso|"
    "nao nao|melhor nao|nunca",
)

POLITE = lx.phrases(
    "please|pls|plz|pleas|thanks|thank you|thank you so much|thank you very much|thanks a lot|many thanks|"
    "cheers|thx|ty|tks|much appreciated|appreciated|"
    "s il vous plait|s il te plait|svp|stp|merci|merci beaucoup|merci bien|mille mercis|"
    "por favor|porfa|porfavor|gracias|muchas gracias|mil gracias|"
    "bitte|danke|danke schon|danke sehr|vielen dank|merci vielmal|besten dank|"
    "per favore|per piacere|grazie|grazie mille|grazie infinite|"
    "obrigado|obrigada|muito obrigado|muito obrigada|se faz favor|faz favor|por gentileza|obg|vlw|"
    "thank u|thanks u|xfa|porfis|grazie tante|merci hein|"
    "kind regards|regards|best regards|best|cordialement|bien a vous|saludos|saludos cordiales|"
    "mit freundlichen grussen|viele grusse|lg|distinti saluti|cordiali saluti|saluti|atenciosamente|abracos|cumprimentos",
)

# Words that carry nothing of their own in a short answer: greetings, interjections, pronouns for
# the card's action, articles, possessives and prepositions; never a number, a negation, a
# condition or a noun of content (those are left for the card to cover, or make the reply unclear).
FILLER = lx.phrases(
    # en
    "oh|ah|um|uh|hmm|well|so|then|now|just|hi|hello|hey|sir|madam|it|that|this|them|all|both|"
    "all of them|both of them|these|those|for me|for us|and|go|right away|immediately|the|a|an|my|"
    "to|on|for|with|at|in|of|is|are|be|please then|yes then|both please|all good",
    # fr
    "alors|donc|bon|eh bien|ben|voila|maintenant|tout|les deux|tous les deux|toutes les deux|le|la|les|l|"
    "un|une|ca|cela|ma|mon|mes|sur|pour|avec|a|au|de|du|des|bonjour|salut|est|c|y|-la|-le|-les",
    # es
    "entonces|pues|bueno|ahora|lo|la|los|las|el|eso|esto|todo|ambos|ambas|las dos|los dos|mi|mis|a|al|de|del|"
    "con|en|para|hola|esta|es",
    # de
    "also|dann|nun|jetzt|das|es|alles|beide|beides|die|der|den|dem|meine|meinen|mein|auf|bei|mit|fur|"
    "von|zu|hallo|gruezi|servus|grussgott|ist|sie|ruhig|mal|doch",
    # it
    "allora|dunque|ora|adesso|lo|la|li|le|il|i|gli|l|tutto|entrambi|entrambe|tutte e due|tutti e due|mia|mio|"
    "sulla|sul|alla|alle|al|con|di|del|della|ciao|pure|e|ue",
    # pt
    "entao|pois|agora|isso|tudo|ambos|ambas|as duas|os dois|o|a|os|as|meu|minha|com|de|do|da|em|para|"
    "ola|oi|e|ai|mim|para mim|por",
    # it: articles joined to prepositions
    "dell|dello|della|degli|delle|nell|nella|sull|all|col|coi|dal|dalla|dai",
    # addressing the agent, easing words
    "mate|buddy|dude|senhor|senhora|senor|senora|signore|signora|monsieur|madame|tranquillo|tranquilo|"
    "tranqui|nomas|so|asi|cosi|assim|bitte so",
    # how a card's value is referred to ("the Visa ending in 9431")
    "ending|ending in|ends in|ending with|qui finit par|qui se termine par|terminada en|que termina en|"
    "terminada|terminado|che finisce con|che termina con|finale|final|endet auf|endend auf",
    # formal openings, conjunctions between the card's values, units of its amounts, modal verbs
    "hereby|i hereby|hiermit|par la presente|por la presente|con la presente|pela presente|"
    "et|und|y|and|e|per|pra|pro|nach|dei|das|dos|fur|hein|"
    "dollar|dollars|dolar|dolares|dollari|dollaro|usd|bucks|"
    "you can|you may|vous pouvez|tu peux|puede|puedes|pueden|podeis|sie konnen|konnen sie|du kannst|"
    "puo|puoi|potete|pode|podem|podes|gerne|"
    # the day of a date the card shows ("on the 14th", "le 14", "dia 14")
    "th|st|nd|rd|dia|le|el|am|um|at|a las|alle|as|del|de",
    # what is added (the card shows how many)
    "zusatzlich*|additional|extra|supplementaire*|adicional*|aggiuntiv*",
    # titles before a name the card shows
    "dr|dra|dre|doctor|docteur|doctora|doktor|dott|dott.ssa|dottssa|dottoressa|doutor|doutora|mr|mrs|ms|"
    "herr|frau|sr|sra|m|mme|uber|via",
)

# Nouns a reply may name when it restates the card ("yes, cancel the reservation", "oui, pour la
# commande"): the kinds of record and of action, in the six languages.
NOUNS = lx.phrases(
    "reservation*|booking*|trip|flight*|order|orders|purchase|appointment*|visit|line|number|bill|"
    "bag|bags|baggage|luggage|suitcase*|data|roaming|refund|return|cancellation|"
    "gift card|card|note|prescription|supplier|address|payment",
    "reservation*|commande*|vol|vols|rendez-vous|ligne|facture|bagage*|valise*|donnees|itinerance|"
    "remboursement|retour|annulation|carte cadeau|carte|ordonnance|adresse|paiement",
    "reserva*|pedido*|vuelo*|cita|linea|factura|maleta*|equipaje|datos|roaming|reembolso|devolucion|"
    "cancelacion|tarjeta de regalo|tarjeta|receta|direccion|pago",
    "buchung*|reservierung*|bestellung*|flug|fluge|termin|leitung|rechnung|koffer|gepack|daten|roaming|"
    "erstattung|rucksendung|stornierung|geschenkkarte|karte|rezept|adresse|zahlung",
    "valija|valijas|gepackstuck*|koffer*|bagagli|reservas|item|items|article|articles|articulo*|artikel|"
    "articol*|artigo*|nummer|numero|linea|linha|itinerancia|storni*",
    "prenotazion*|ordine|ordini|volo|voli|appuntamento|linea|bolletta|valigia|valigie|bagaglio|dati|roaming|"
    "rimborso|reso|annullamento|gift card|carta regalo|carta|ricetta|indirizzo|pagamento",
    "reserva*|pedido*|encomenda*|voo|voos|consulta|linha|fatura|mala|malas|bagagem|dados|roaming|reembolso|"
    "devolucao|cancelamento|cartao-presente|cartao presente|cartao|receita|endereco|pagamento",
)

# Verbs of money on a card that shows a payment or a refund ("yes, charge my Visa ending 9431").
MONEY_VERBS = lx.phrases(
    "charge|charge it|charge my|bill it|pay|pay it|pay with|paid|refund*|put it on|use|use it|use my|debit*|"
    "rembours*|factur*|prelev*|cobr*|reembols*|pagar|pague|paguen|pagalo|abbuch*|erstatt*|bezahl*|belast*|"
    "addebit*|rimbors*|paga|pagate|utilis*|carg*|stick it on",
)


# Portuguese "no"/"na" (in the) before these is no negation.
_PT_AFTER_NO = lx.PT_AFTER_NO | frozenset("linha linhas conta reserva encomenda consulta cartao-presente fatura voo".split())
_SINGLE_YES = frozenset(p for p in YES if len(p) == 1) | {("yes",), ("si",), ("sim",), ("ja",), ("oui",)}


@dataclass(frozen=True)
class CardWords:
    """What of a card a reply may repeat and still be a plain yes: its verbs (the action's, in the
    six languages) and the values it shows (record ids, amounts, names, dates)."""

    verbs: tuple[lx.Phrase, ...] = ()
    values: tuple[lx.Phrase, ...] = ()

    @staticmethod
    def of(families: Iterable[str], values: Iterable[object], year: int = 2024) -> "CardWords":
        verbs = tuple(p for f in families for p in VERBS.get(f, ()))
        vals = {value_tokens(v, year) for v in values if v not in (None, "")}
        return CardWords(tuple(sorted(set(verbs), key=lambda p: (-len(p), p))), tuple(sorted((v for v in vals if v), key=lambda p: (-len(p), p))))


def _verbs(*groups: str) -> tuple[lx.Phrase, ...]:
    return lx.phrases(*groups)


# The card's own action, as a reply repeats it in any form ("yes, cancel it", "annulez-la",
# "cancélenla", "stornieren Sie"): the stems of each family's verbs in the six languages.
VERBS: dict[str, tuple[lx.Phrase, ...]] = {
    "cancel": _verbs("cancel*|annul*|cancel*|storn*|cancell*|anul*|weg|weg damit"),
    "change": _verbs("change*|modif*|updat*|chang*|cambi*|ander*|aender*|mud*|alter*|aggiorn*|actualiz*|atualiz*|make the change"),
    "book": _verbs("book*|reserv*|buch*|prenot*"),
    "bags": _verbs("add|add it|add them|adding|ajout*|agreg*|anad*|hinzufug*|fugen sie*|hinzu|dazubuch*|aggiung*|adicion*"),
    "return": _verbs("return*|send back|retourn*|renvoy*|devolv*|devuelv*|zurucksend*|zuruckgeb*|zuruckschick*|rucksend*|veranlass*|restitu*|rendere|proceed with the return"),
    "refund": _verbs("refund*|rembours*|reembols*|erstatt*|rimbors*"),
    "exchange": _verbs("exchang*|swap*|echang*|cambi*|umtausch*|tausch*|sostitu*|troc*|troqu*"),
    "resume": _verbs("resum*|reactiv*|reaktiv*|riattiv*|reativ*|turn it back on"),
    "suspend": _verbs("suspen*|sperr*|sospend*"),
    "reschedule": _verbs("reschedul*|mov*|deplac*|report*|reprogram*|cambi*|verschieb*|verleg*|spost*|remarc*|remarqu*|reagend*|mud*|"
                         "pasala|pasalo|pasarla|pasenla|pasela|muev*|muov*"),
    "schedule": _verbs("schedul*|book*|reserv*|prend*|agend*|program*|vereinbar*|buch*|prenot*|fiss*|marc*"),
    "roaming_on": _verbs("turn it on|turn on|enabl*|switch it on|switch on|activ*|aktivier*|einschalt*|schalt*|attiv*|ativ*|accend*|lig*"),
    "roaming_off": _verbs("turn it off|turn off|disabl*|switch it off|desactiv*|deaktivier*|ausschalt*|disattiv*|desativ*"),
    "refuel": _verbs("add|add it|add them|adding|ajout*|agreg*|anad*|hinzufug*|dazubuch*|aufbuch*|aggiung*|adicion*|recharg*|coloc*|pon*"),
    "passengers": _verbs("updat*|chang*|modif*|actualiz*|aktualis*|aggiorn*|atualiz*"),
    "payment_request": _verbs("send*|envoy*|envi*|send*|schick*|invi*"),
    "certificate": _verbs("send*|envoy*|envi*|schick*|invi*"),
    "note": _verbs("add|add it|ajout*|agreg*|hinzufug*|aggiung*|adicion*"),
    "supplier": _verbs("switch*|mov*|chang*|cambi*|wechsel*|trasfer*|troc*|mud*"),
    "address": _verbs("updat*|chang*|modif*|cambi*|ander*|mud*|alter*"),
    "payment": _verbs("chang*|switch*|modif*|cambi*|ander*|mud*|alter*"),
    "items": _verbs("chang*|swap*|modif*|cambi*|ander*|mud*"),
    "renew": _verbs("renew*|extend*|renouvel*|prolong*|renov*|verlanger*|rinnov*|prorrog*"),
    "pay": MONEY_VERBS,
}


# Words a card shows that a reply repeating them would turn into a condition, a contrast or a
# negation of it: never taken as the card's own words.
_NOT_VALUES = frozenset(
    "not no but if unless only except instead without another other more less than or and nor never "
    "pas sin sauf seulement nicht ohne nur aber wenn senza solo ma se sem so mas".split()
)
_MONEY = frozenset("payment paid pay cost price refund charge charged amount".split())
_ISO_DAY = re.compile(r"^\d{4}-\d\d-\d\d")


def reply_words(families: Iterable[str], values: Iterable[object], texts: Iterable[str], year: int = 2024) -> CardWords:
    """What a reply to a card may repeat and still be a plain yes: the verbs of its actions'
    families (and of money when the card shows a payment or a refund), the values it shows, and
    the words of its lines (`texts`) but those of conditions, contrasts and negations."""
    words: list[str] = []
    for text in texts:
        words.extend(tokens(text, year))
    money = ["pay"] if _MONEY & set(words) else []
    shown = [*values, *(w for w in words if w not in _NOT_VALUES)]
    days = [str(int(w[8:10])) for w in words if _ISO_DAY.match(w)]  # "the 14th" of 2025-03-14
    return CardWords.of([*families, *money], [*shown, *days], year)


@dataclass(frozen=True)
class Reading:
    answer: Answer
    reason: str  # why, in words: "a plain yes"; "it also says 'but'"; "a question"


def _cover(toks: tuple[str, ...], tables: dict[str, Iterable[lx.Phrase]]) -> tuple[set[str], list[str]]:
    """Cover the reply's tokens left to right with the longest phrase of any table; which tables
    were used, and the tokens no table covers."""
    used: set[str] = set()
    left: list[str] = []
    i = 0
    while i < len(toks):
        best: tuple[int, str] | None = None
        for name, table in tables.items():
            phrase = lx.longest_at(toks, i, table)
            if phrase is not None and (best is None or len(phrase) > best[0]):
                best = (len(phrase), name)
        if best is None:
            left.append(toks[i])
            i += 1
        else:
            used.add(best[1])
            i += best[0]
    return used, left


def _plain(toks: tuple[str, ...], card: CardWords) -> tuple[str, ...]:
    """Chat spellings as their words: a letter held ("yesss", "siii", "simmm", "jaaa") is the word;
    Portuguese "no"/"na" before a noun is "in the", not a no; two of the card's values joined by a
    hyphen ("JFK-LAX") are the two."""
    out: list[str] = []
    single = {p[0] for p in card.values if len(p) == 1}
    for i, tok in enumerate(toks):
        parts = tok.split("-")
        if len(parts) > 1 and (tok,) not in card.values and all(p in single for p in parts):
            out.extend(parts)
            continue
        short = re.sub(r"([a-z])\1{1,}$", r"\1", tok) if len(tok) > 2 and tok.isalpha() else tok
        if short != tok and (short,) in _SINGLE_YES:
            tok = short
        elif tok in ("no", "na", "nos", "nas") and i + 1 < len(toks) and toks[i + 1] in _PT_AFTER_NO:
            tok = "a"
        out.append(tok)
    return tuple(out)


def answer_reading(reply: str, card: CardWords = CardWords(), year: int = 2024) -> Reading:
    """Yes, no or unclear, with the reason (see the module's docstring)."""
    text = (reply or "").strip()
    if not text:
        return Reading("unclear", "an empty reply")
    if len(text) > MAX_CHARS:
        return Reading("unclear", "a long reply, not a plain yes or no")
    if "?" in text or "¿" in text:
        return Reading("unclear", "a question")
    toks = tokens(text, year)
    if not toks:
        return Reading("unclear", "no words")
    if lx.has(toks, DOUBT):
        return Reading("unclear", "sarcasm, not a plain yes")
    toks = _plain(toks, card)
    used, left = _cover(
        toks, {"yes": YES, "no": NO, "polite": POLITE, "filler": FILLER, "noun": NOUNS, "verb": card.verbs, "value": card.values}
    )
    if left:
        shown = " ".join(left[:4])
        if "no" in used:
            return Reading("unclear", f"a refusal with more in it ({shown!r})")
        return Reading("unclear", f"more than a yes: it also says {shown!r}")
    if "no" in used:
        if "yes" in used:
            return Reading("unclear", "both a yes and a no")
        if "verb" in used:  # "no, cancel it": a no that asks for the card's action
            return Reading("unclear", "a no that also asks for the action")
        return Reading("no", "a plain no")
    if "yes" in used or "verb" in used:
        return Reading("yes", "a plain yes")
    return Reading("unclear", "no yes or no in it")
