"""The words the gate reads conversations with, in English, French, Spanish, German, Italian and
Portuguese.

Every entry is a phrase in normalized tokens (see `text.tokens`: lower case, no accents, `don't`
opened to `do not`, elisions split). A phrase ending in `*` matches any word starting with it
(`annul*` matches `annuler`, `annulez`, `annullare`). The tables are data: `consent.py` and
`acceptance.py` decide what a proposal or a reply says with them, and a word added here works in
every domain.
"""

from __future__ import annotations

from typing import Iterable

from ledger_tui.engine.conversation.text import plain_words, tokens

Phrase = tuple[str, ...]


def phrases(*groups: str) -> tuple[Phrase, ...]:
    """Each group is `|`-separated phrases; returns them tokenized, longest first."""
    out: set[Phrase] = set()
    for group in groups:
        for phrase in group.split("|"):
            phrase = phrase.strip()
            if phrase:
                star = phrase.endswith("*")
                bare = phrase.rstrip("*")
                toks = plain_words(bare) or tokens(bare)
                if toks:
                    out.add(toks[:-1] + (toks[-1] + "*",) if star else toks)
    return tuple(sorted(out, key=lambda p: (-len(p), p)))


AFFIRM = phrases(
    # en
    "yes|yeah|yea|yep|yup|yess|yes please|sure|sure thing|ok|okay|k|alright|all right|confirm*|"
    "correct|that is correct|that is right|exactly|absolutely|definitely|certainly|of course|"
    "please do|do it|go ahead|go for it|proceed|please proceed|sounds good|sounds great|sounds perfect|"
    "perfect|agreed|i agree|fine|that is fine|that works|works for me|let us do it|lets do it|"
    "affirmative|approved|i approve|that is what i want|exactly what i want|deal|please|indeed|"
    "go on|carry on|make it so|book it|works|that works for me|fine by me|works for me",
    # fr
    "oui|ouais|ouaip|d accord|dac|bien sur|volontiers|allez-y|allez y|vas-y|vas y|je confirme|"
    "confirme|c est correct|c est exact|exact|exactement|parfait|tout a fait|absolument|faites-le|"
    "faites le|procedez|c est bon|ca marche|entendu|certainement|avec plaisir|oui merci|"
    "c est parfait|tres bien|je valide|valide|go|carrement|ca me va|ca me convient|allez|je veux bien|ca roule|ok ca roule|allons-y|allons y",
    # es
    "si|claro|vale|de acuerdo|adelante|confirmo|correcto|exacto|perfecto|por supuesto|hagalo|hazlo|"
    "proceda|procede|esta bien|dale|okey|claro que si|desde luego|sin duda|de una|listo|orale|venga|me viene bien|me parece bien|perfecto asi",
    # de
    "ja|jawohl|jo|genau|einverstanden|bestatige|ich bestatige|bestaetige|richtig|korrekt|stimmt|"
    "gerne|gern|naturlich|natuerlich|sicher|klar|na klar|machen sie|mach das|machen sie das|los|passt|"
    "in ordnung|auf jeden fall|selbstverstandlich|ja bitte|alles klar|gut|sehr gut|geht klar|von mir aus|"
    "durchfuhren|fuhren sie|legen sie los|passt mir|spricht nichts dagegen|nichts dagegen",
    # it
    "si|certo|va bene|d accordo|confermo|procedi|proceda|esatto|corretto|perfetto|assolutamente|"
    "certamente|vai|fallo|lo faccia|faccia pure|prego|volentieri|ok grazie|benissimo|senz altro|"
    "ottimo|dai|vai pure|va benissimo|mi va bene|mi sta bene",
    # pt
    "sim|claro|pode|pode sim|confirmo|correto|certo|exato|exatamente|perfeito|com certeza|tudo bem|"
    "esta bem|ta bem|ta|va em frente|prossiga|pode prosseguir|faca|faca isso|beleza|por favor|"
    "isso mesmo|isso ai|combinado|fechado|pode fazer|bora|manda ver|pode ser|por mim tudo bem",
)

# Words that are a yes only as the whole answer ("Right." "Sale."), and common words otherwise.
AFFIRM_ALONE = phrases("right|right right|sale|sale pues|bien|muy bien|bon|gut|bene|bom|top")

# Phrases that look negative or conditional but are not: removed before reading a clause.
HARMLESS = phrases(
    "no problem|no problems|not a problem|no worries|no rush|no hurry|no need to rush|not at all|"
    "no questions|no other changes|no other questions|nothing else|that is all|no further|"
    "no more questions|no changes to anything else|not in a hurry|no extra|no additional|"
    "as soon as possible|if possible|if you can|if you could|if you would|if you do not mind|"
    "if that is ok|if that is okay|if that is alright|if that is fine|if i may|if anything|"
    "thank you|thanks|merci|gracias|danke|grazie|obrigado|obrigada|"
    "pas de probleme|pas de souci|aucun probleme|sans probleme|rien d autre|c est tout|"
    "sin problema|ningun problema|no hay problema|nada mas|eso es todo|no hay prisa|"
    "kein problem|keine eile|kein stress|sonst nichts|das ist alles|"
    "nessun problema|non c e fretta|niente altro|nient altro|e tutto|"
    "sem problema|sem pressa|nada mais|e so isso|so isso|nao ha pressa|"
    "si possible|si vous pouvez|si es posible|wenn moglich|wenn es geht|se possibile|se possivel|"
    "s il vous plait|s il te plait|por favor|bitte schon|per favore|"
    "if needed|if necessary|na ja|naja|ya veo|je vois|i see|entiendo|verstehe|ich verstehe|capisco|entendi|"
    "ah vale|ah ta|na gut|i guess|i guess so|right now|"
    "can not wait|cannot wait|no veo la hora|non vedo l ora|nao vejo a hora|j ai hate|ich kann es kaum erwarten|"
    "why not|do not see why not|pourquoi pas|je ne vois pas pourquoi pas|warum nicht|perche no|perche non|"
    "por que no|por que nao|no need|no need for|no hace falta|pas besoin|nicht notig|nicht noetig|non serve|"
    "non c e bisogno|nao precisa|sem necessidade|i do not mind|do not mind|no me importa|no me molesta|"
    "ca ne me derange pas|cela ne me derange pas|es macht mir nichts aus|macht mir nichts aus|"
    "non mi da fastidio|non mi dispiace|non mi dispiacerebbe|nao me importo|nao me incomoda|"
    "not a bad idea|no es mala idea|ce n est pas une mauvaise idee|pas une mauvaise idee|keine schlechte idee|"
    "non e una cattiva idea|nao e ma ideia|would not hurt|no me vendria mal|nao custa nada|sem problemas|"
    "sem problema nenhum|kein problem|keine ursache|nessun problema|"
    "if you do not mind|si ca ne vous derange pas|si no le importa|si no te importa|"
    "wenn es ihnen nichts ausmacht|se non le dispiace|se non ti dispiace|se nao for incomodo|"
    "se nao se importa|se nao te importa|"
    "was not sure at first|at first|au debut|al principio|all inizio|no comeco|erst nicht sicher|"
    "no lo tenia claro|non ero convinto|non ero sicuro|nao tinha certeza|j hesitais|j ai hesite|"
    "even if|even though|meme si|aunque sea|incluso si|selbst wenn|auch wenn|anche se|mesmo se|ainda que|"
    "porfa|porfavor|pls|plz|kein ding|kein thema|keine frage|"
    "yes i understand|yes i see|yes understood|oui je comprends|oui je vois|si entiendo|si ya veo|"
    "ja verstehe|ja ich verstehe|si capisco|sim entendi|sim entendo",
)

# A bare "no" opening a clause (after a discourse marker or not) refuses.
NEGATION_START = phrases("no|nope|nah|non|nein|nee|nao")
DISCOURSE = phrases(
    "well|oh|ah|actually|hmm|um|enfin|bon|ben|eh|bueno|pues|mmm|also|naja|anzi|beh|allora|pera|olha|"
    "bem|hum|on second thought|wait|so|donc|alors|asi que|entonces|quindi|dunque|entao|therefore|"
    "then|thus|and|et|y|und|e"
)
# Refusals anywhere in a clause.
REFUSAL = phrases(
    "never mind|nevermind|forget it|forget about it|cancel that|scratch that|no way|no thanks|"
    "no thank you|not interested|please do not|i would rather not|rather not|"
    "better not|laisse tomber|laissez tomber|oubliez ca|oublie ca|pas question|hors de question|"
    "non merci|surtout pas|certainement pas|ni hablar|de ninguna manera|para nada|olvidalo|olvidelo|"
    "no gracias|mejor no|ni de broma|vergiss es|vergessen sie es|lassen sie es|auf keinen fall|"
    "keinesfalls|nein danke|bloss nicht|lieber nicht|doch nicht|besser nicht|lascia stare|"
    "lasci stare|lascia perdere|lasci perdere|non se ne parla|no grazie|meglio di no|per niente|"
    "esquece|esqueca|deixa pra la|deixa para la|de jeito nenhum|nem pensar|nao obrigado|"
    "nao obrigada|melhor nao|de modo algum|ahora no|agora nao|adesso no|ora no|jetzt nicht|"
    "oubliez|oublie|olvidalo|olvidelo|lascia perdere|lasci perdere|esquece|esqueca|vergessen sie es|"
    "i will pass|i ll pass|je passe|paso|ich verzichte|passo|dispenso|no gracias|non grazie|"
    "pas maintenant|maintenant non|now no"
)
NEGATORS = phrases("not|no|never|ne|pas|n|non|no|nunca|nicht|kein*|nie|mai|nao|nem|ni|jamais|niemals|nein")
# Wanting: refuses only when what is not wanted is the action ("I don't want to cancel it"), not
# when it is something else ("I don't want to pay for nothing").
WANT = phrases("want|wish|veux|voulez|souhaite|quiero|quiere|deseo|will|mochte|moechte|wollen|voglio|vuole|desidero|quero|quer|desejo")
# What a negation must govern to refuse: agreement, the action, doing it at all.
GOVERNED = phrases(
    "proceed|do|go|ahead|agree|confirm*|sure|right|correct|ready|yet|now|ok|okay|happy|"
    "like|fine|accept*|approve*|so fast|"
    "accord|faites|faire|maintenant|encore|sur|sure|"
    "hagas|haga|hacer|ahora|todavia|aun|seguro|segura|"
    "einverstanden|machen|jetzt|noch|sicher|tun|"
    "fare|faccia|adesso|ora|ancora|sicuro|sicura|"
    "faca|fazer|agora|ainda|certeza"
)
DEFER = phrases(
    "wait|hold on|hold off|hang on|let me think|let me check|let me ask|let me see|let me talk|"
    "think about it|think it over|not yet|give me a minute|give me a moment|give me a second|"
    "one moment|one second|one sec|just a moment|just a sec|just a minute|not now|not right now|"
    "on second thought|second thoughts|maybe|perhaps|not sure|unsure|i am not sure|i will get back|"
    "get back to you|ask my|check with|talk to my|before you|first tell|first check|first let|"
    "let you know|i will let you know|je vous dirai|je vous tiens au courant|te aviso|le aviso|te digo|"
    "ich sage ihnen bescheid|ich melde mich|ti faccio sapere|le faccio sapere|eu te aviso|te falo|"
    "once i|once we|as soon as i|as soon as we|after i|when i have|i will call|call you back|call back|"
    "une fois que|des que j|je vous rappelle|je te rappelle|apres avoir|"
    "en cuanto|tan pronto|despues de que|te llamo|le llamo|lo hablo|"
    "sobald|nachdem|ich rufe|ich melde mich|"
    "appena|non appena|dopo che|ti chiamo|la richiamo|ti richiamo|"
    "assim que|logo que|depois que|te ligo|ligo depois|a gente ve|"
    "but first|sleep on it|it depends|depends on|not until|hmm|"
    "attendez|attends|attendre|un instant|une minute|une seconde|pas encore|pas tout de suite|"
    "d abord|avant de|avant que|reflechir|je vais reflechir|peut-etre|peut etre|je ne sais pas|"
    "pas sur|pas sure|je reviens|pas avant|"
    "espera|espere|esperen|un momento|un segundo|un minuto|todavia no|aun no|primero|"
    "antes de|pensarlo|pensarmelo|lo pienso|quizas|quiza|tal vez|no estoy seguro|no estoy segura|"
    "pensandolo bien|dejame pensar|dejeme pensar|no hasta|"
    "warten|warte|warten sie|augenblick|einen moment|moment mal|noch nicht|zuerst|erst|"
    "vorher|bevor|uberlegen|ueberlegen|nachdenken|vielleicht|weiss nicht|nicht sicher|"
    "aspetta|aspetti|aspettate|un attimo|non ancora|prima di|prima che|prima mi|"
    "pensarci|ci penso|forse|non sono sicuro|non sono sicura|a pensarci bene|"
    "fammi pensare|mi faccia pensare|"
    "espera|um momento|um segundo|um minuto|ainda nao|primeiro|antes de|"
    "vou pensar|talvez|nao tenho certeza|nao sei|pensando bem|deixa eu pensar|pera|um instante|vou ver|deixa eu ver|vou verificar"
)
# Times: a deferral when they qualify the yes ("yes, but tomorrow"; "later"), not when they are
# part of what the customer says ("turn roaming on, I fly tomorrow").
TIME = phrases(
    "later|tomorrow|tonight|next week|next month|monday|tuesday|wednesday|thursday|friday|saturday|"
    "sunday|this weekend|plus tard|demain|ce soir|la semaine prochaine|lundi|mardi|mercredi|jeudi|"
    "vendredi|samedi|dimanche|mas tarde|luego|despues|manana|la semana que viene|la proxima semana|"
    "lunes|martes|miercoles|jueves|viernes|sabado|domingo|spater|spaeter|morgen|nachste woche|"
    "naechste woche|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|piu tardi|dopo|"
    "domani|la prossima settimana|lunedi|martedi|mercoledi|giovedi|venerdi|sabato|domenica|"
    "mais tarde|depois|amanha|semana que vem|proxima semana|segunda|terca|quarta|quinta|sexta|"
    "mas adelante|en otro momento|plus tard|un autre jour|ein andermal|un altro giorno|outro dia|"
    "so na|so no|so semana|so depois|so amanha|seulement demain|solo manana|nur morgen|solo domani"
)
CONDITION = phrases(
    "if|only if|as long as|provided|providing|unless|assuming|in case|on condition|as soon as|"
    "si|seulement si|a condition|pourvu que|tant que|sauf si|a moins que|"
    "si|solo si|solamente si|siempre que|con tal de que|a menos que|"
    "wenn|falls|sofern|nur wenn|vorausgesetzt|es sei denn|"
    "se|solo se|soltanto se|purche|a condizione|a meno che|sempre che|"
    "se|so se|somente se|desde que|contanto que|caso|a menos que|a nao ser que|siempre y cuando|"
    "whether|ob|qualora|nel caso|a patto che|a patto|purche|should it|should that|provided that|"
    "assuming that|supposing|only with|only at|only for|pour peu que|en admettant|admettons|a supposer|"
    "seulement avec|suponiendo|en caso de que|solo con|unicamente si|nur bei|nur mit|nur falls|"
    "ammesso che|supponendo|solo con|supondo que|so com|somente com|du moment que|des lors que"
)
# After "si"/"se", words that make it "if" (otherwise it is "yes" or a pronoun).
IF_NEXT = phrases(
    "es|est|c|il|elle|on|vous|tu|no|ne|n|hay|puedo|puedes|puede|me|te|le|la|lo|el|ella|usted|"
    "ustedes|nous|je|j|cela|ca|esto|eso|todo|tout|ya|aun|todavia|costa|cuesta|coute|e|era|fosse|"
    "sia|nao|for|non|ci|ce|vi|ha|hai|il|lei|voce|tiver|houver|possibile|possivel|gratuit|gratis|"
    "sale|sono|estoy|esta|estas|fuera|pago|cobran"
)
REQUEST = phrases(
    "can you|could you|would you|will you|would you mind|can i ask you to|"
    "pourriez-vous|pourriez vous|pouvez-vous|pouvez vous|peux-tu|peux tu|tu peux|vous pouvez|"
    "puedes|puede|podria|podrias|pueden|podrian|"
    "konnen sie|konnten sie|kannst du|koennen sie|koennten sie|konntest du|"
    "potrebbe|puoi|puo|potresti|potreste|"
    "pode|poderia|voce pode|vc pode|podes|poderias"
)
INSTEAD = phrases(
    "instead|rather|rather than|instead of|i prefer|i would prefer|prefer to|the other one|"
    "plutot|plutot que|a la place|au lieu|je prefere|je prefererais|"
    "en cambio|en lugar|en vez|mas que|prefiero|preferiria|"
    "stattdessen|anstatt|statt|lieber|"
    "invece|piuttosto|piuttosto che|al posto|preferisco|preferirei|"
    "em vez|ao inves|ao inves de|em vez disso|prefiro|preferia"
)
KEEP = phrases(
    "keep*|leave|retain|stay with|stick with|continue with|"
    "garde*|conserv*|laiss*|rester|reste|restez|restons|"
    "manten*|mantien*|conservar|conserve|deja|dejala|dejalo|dejalas|dejalos|dejamos|dejemos|dejelo|dejela|"
    "dejar|deje|seguir con|continuar con|"
    "behalt*|lass*|belass*|bleib*|"
    "tener*|tenga|tieni|mantenere|lasci*|restare|resto con|rimanere|rimaniamo|"
    "manter*|mantenh*|mantem|deix*|continuar com|ficar com|fico com|ficamos com"
)
# "As it is": with a keep verb, or alone ("the order is fine the way it is"), the customer keeps it.
AS_IS = phrases(
    "as it is|as is|as it was|as they are|the way it is|the way they are|unchanged|like it is|"
    "tel quel|telle quelle|comme il est|comme elle est|comme ca|comme c est|"
    "como esta|como estaba|tal cual|tal como esta|asi como esta|"
    "wie sie ist|wie es ist|wie er ist|so wie sie ist|so wie es ist|gut so|beim alten|wie bisher|wie gehabt|"
    "com e|come e|come sta|cosi com e|cosi come|va bene cosi|"
    "como esta|como estava|assim como esta|do jeito que esta"
)
# Words that make a "keep" about the thing proposed: the current one, a pronoun.
KEEP_OBJECT = phrases(
    "current|existing|the same|actuel|actuelle|actual|aktuell*|bisherig*|attuale|atual|"
    "it|them|that|this|la|le|les|lo|los|las|sie|es|ihn|li|o|a|os|as|isso|isto|ca|cela"
)
REPORT_AUX = phrases(
    "has been|have been|had been|was|were|has|have|had|is now|are now|already|successfully|"
    "avais|avait|avions|habia|habian|hatte|hatten|avevo|aveva|avevamo|tinha|tinham|havia|"
    "a ete|ont ete|est|sont|ai|avons|deja|avec succes|"
    "ha sido|han sido|fue|fueron|ha|he|hemos|han|ya|con exito|"
    "wurde|wurden|ist|sind|hat|habe|haben|bereits|schon|erfolgreich|"
    "e stato|e stata|sono stati|ho|abbiamo|ha|gia|con successo|"
    "foi|foram|ja|tem sido|com sucesso|fiz|fizemos"
)

# Action families: the verbs (and nouns) that name a kind of write. A write tool lists the families
# that name it; a clause names a family when one of these phrases is in it.
ACTIONS: dict[str, tuple[Phrase, ...]] = {
    "cancel": phrases(
        "cancel*|call off|annul*|cancella*|storn*|absag*|absagen|kundig*|disdic*|disdir*|anul*|"
        "rescind*|void|terminate|resili*|dar de baja|dala de baja|darla de baja|de baja|disdett*"
    ),
    "change": phrases(
        "change*|chang*|modif*|switch*|swap*|upgrad*|downgrad*|rebook*|updat*|move*|replac*|amend*|"
        "alter*|adjust*|edit*|correct the|fix the|"
        "changer|remplac*|mettre a jour|deplac*|"
        "cambi*|reemplaz*|sustitu*|actualiz*|mover|"
        "ander*|aender*|umbuch*|wechsel*|aktualis*|ersetz*|verschieb*|"
        "sostitu*|aggiorn*|spost*|"
        "mud*|alter*|substitu*|atualiz*|trocar|troque|troca"
    ),
    # verbs only: "reservation" and "booking" name a record, not an action
    "book": phrases("book*|reserv*|buch*|prenot*|make a reservation|make a booking"),
    "bags": phrases(
        "bag|bags|baggage*|luggage|suitcase*|checked bag*|bagag*|valise*|equipaj*|maleta*|gepack*|"
        "gepaeck*|koffer*|bagagl*|valigi*|mala|malas"
    ),
    "passengers": phrases(
        "passenger*|traveler*|traveller*|passager*|pasajer*|passagier*|passegger*|passageir*|viajero*|"
        "name on|names on"
    ),
    "certificate": phrases(
        "certificate*|voucher*|compensat*|credit|certificat*|bon d achat|avoir|certificado*|vale|"
        "compensac*|gutschein*|entschadig*|zertifikat*|buono|voucher|rimbors*|indennizz*|"
        "certificado*|compensac*|indeniz*"
    ),
    "return": phrases(
        "return*|send back|send it back|send them back|retour*|retourn*|renvoy*|devol*|devuelv*|"
        "zuruck*|zurueck*|rucksend*|ruecksend*|zurucksend*|restitu*|rendere|reso|devolv*"
    ),
    "refund": phrases("refund*|rembours*|reembols*|erstatt*|rimbors*|reembols*"),
    "exchange": phrases(
        "exchang*|swap*|replac*|trade|echang*|cambi*|intercambi*|umtausch*|tausch*|sostitu*|troc*|"
        "substitu*"
    ),
    "payment": phrases(
        "payment method|payment|pay with|pay by|charge*|card|paypal|gift card|paiement|payer|carte|"
        "pago|pagar|tarjeta|zahlung*|bezahl*|karte|pagamento|pagare|carta|cartao"
    ),
    "address": phrases("address*|adresse*|direccion*|domicilio|anschrift|indirizz*|endereco*"),
    "items": phrases(
        "item*|product*|variant*|option*|article*|produit*|articulo*|producto*|artikel*|produkt*|"
        "articol*|prodott*|artigo*|produto*"
    ),
    "refuel": phrases(
        "refuel*|add data|more data|extra data|data top-up|top up|top-up|gb|gigabyte*|data|"
        "donnees|datos|daten|dati|dados|recharg*|aufladen"
    ),
    # roaming on and off are two actions: "keep roaming off" proposes no roaming
    "roaming_on": phrases(
        "turn on roaming|turn roaming on|turn on data roaming|switch on roaming|switch roaming on|enable roaming|"
        "enable data roaming|enabling roaming|activate roaming|roaming on|turning on roaming|turning roaming on|"
        "enable it|turn it on|activer l itinerance|activez l itinerance|activar el roaming|activarte el roaming|"
        "activa el roaming|activame el roaming|activeme el roaming|roaming einschalten|roaming aktivieren|"
        "schalten sie roaming ein|schalte roaming ein|attivare il roaming|attivi il roaming|attivate il roaming|"
        "attiva il roaming|ativar o roaming|ativa o roaming|ative o roaming|activez l itinerance|active roaming"
    ),
    "roaming_off": phrases(
        "turn off roaming|turn roaming off|switch off roaming|disable roaming|deactivate roaming|roaming off|"
        "roaming is off|roaming disabled|roaming is disabled|turn it off|desactiver l itinerance|"
        "desactivar el roaming|roaming ausschalten|roaming deaktivieren|disattivare il roaming|"
        "desativar o roaming"
    ),
    "resume": phrases(
        "resum*|reactivat*|restor*|unsuspend*|turn back on|reconnect*|reactiv*|reativ*|retablir|"
        "reanud*|restablec*|reaktivier*|wiederherstell*|riattiv*|ripristin*|retom*|restabelec*"
    ),
    "suspend": phrases("suspen*|pause*|deactivat*|desactiv*|sperr*|deaktivier*|sospend*|disattiv*"),
    "payment_request": phrases(
        "payment request|pay the bill|pay your bill|pay the overdue|request for payment|"
        "send a payment|send you a payment|demande de paiement|solicitud de pago|zahlungsaufforderung|"
        "richiesta di pagamento|solicitacao de pagamento|pay|payer|pagar|bezahlen|pagare|bill|facture|"
        "factura|rechnung|bolletta|fatura|conta|cobranca|cobro|cobrar|cobre|manda a cobranca|envie a cobranca"
    ),
    "schedule": phrases(
        "schedul*|book*|reserv*|set up|make an appointment|"
        "prendre rendez-vous|prenez le rendez-vous|prenez rendez-vous|prenez-moi|cita|agend*|"
        "programar|termin*|vereinbar*|appuntamento|prenot*|fissare|consulta|marcar"
    ),
    "reschedule": phrases(
        "reschedul*|move*|chang*|shift*|push*|postpon*|deplac*|reporter|decaler|reprogram*|cambiar|"
        "mover|verschieb*|verleg*|spost*|rimand*|remarc*|mudar|adiar"
    ),
    "supplier": phrases(
        "supplier*|pharmacy|pharmacies|switch*|transfer*|fournisseur*|pharmacie*|proveedor*|farmacia*|"
        "lieferant*|apotheke*|fornitor*|fornecedor*|farmacia"
    ),
    "note": phrases("note*|add a note|annotat*|comment*|nota|notiz*|anmerkung*|notas"),
    "renew": phrases("renew*|extend*|prolong*|renouvel*|renov*|verlanger*|verlaenger*|rinnov*|prorrog*"),
    "transfer": phrases(
        "transfer*|human agent|human|escalat*|specialist|transferer|transferir|weiterleit*|"
        "trasferi*|mensch*|humain|humano|umano|persona|put me through|connect me|verbind*|"
        "passez-moi quelqu un|passez-moi un conseiller|pasame con|mi passi qualcuno|mi passi un operatore|"
        "me passa pra|me passa para|passa pra|atendente|operatore|durchstellen|transfira"
    ),
}

# Words after Portuguese "no"/"na" (em + o/a: "in the"), where it is no negation.
PT_AFTER_NO = frozenset(
    "cartao cartão final fim dia meu minha seu sua site app aplicativo email e-mail numero número pedido voo "
    "nome endereco endereço mesmo momento caso total valor paypal visa mastercard credito crédito debito".split()
)

# A yes narrowed to part of the proposal ("just the return flight", "only the blue one").
RESTRICT = phrases(
    "just the|only the|just this|only this|just that one|only that one|the other|another one|"
    "seulement le|seulement la|juste le|juste la|l autre|solo el|solo la|solamente el|el otro|la otra|"
    "nur den|nur die|nur das|den anderen|die andere|das andere|solo il|solo la|soltanto|l altro|l altra|"
    "so o|so a|apenas o|apenas a|o outro|a outra"
)

# Asking what something means is a question, whatever words it quotes ("'go ahead' meaning …?").
MEANING = phrases(
    "meaning|does that mean|does it mean|do you mean|you mean|veut dire|ca veut dire|quiere decir|significa|"
    "heisst das|heißt das|bedeutet das|vuol dire|quer dizer|isso quer dizer"
)

# The customer repeating the proposal back ("so to confirm: …"): what follows restates it.
RESTATE = phrases(
    "to confirm|so to confirm|just to confirm|to recap|recap|so that is|to be sure|pour etre sur|pour confirmer|"
    "si je resume|confirmo|o sea|para confirmar|zum mitschreiben|zur bestatigung|also nochmal|ricapitolo|"
    "per confermare|confirmando|entao confirmando"
)

# Opening a new topic after the answer: "Also, …", "By the way, …".
NEW_TOPIC = phrases(
    "also|another thing|one more thing|by the way|btw|and also|additionally|besides|separately|"
    "aussi|autre chose|par ailleurs|au fait|en plus|de plus|"
    "tambien|otra cosa|por cierto|ademas|aparte|"
    "auch|ausserdem|noch etwas|ubrigens|uebrigens|"
    "anche|un altra cosa|inoltre|a proposito|"
    "tambem|outra coisa|alem disso|a proposito|por falar nisso"
)

# Nouns that name a record, never an action, though a verb's stem matches them ("reservation").
RECORD_NOUNS = frozenset(
    "reservation reservations booking bookings reservacion reservierung reservierungen "
    "buchung buchungen prenotazione prenotazioni bookings order orders commande commandes pedido pedidos "
    "bestellung bestellungen ordine ordini encomenda encomendas appointment appointments data "
    "changes change modification modifications cancellation cancellations annulation cancelacion "
    "stornierung cancellazione cancelamento".split()
)
# "While …" is a reason, "while … not" a condition ("as long as I don't pay shipping").
WHILE = phrases("while|as long as|mientras|solange|tant que|finche|fintanto che|enquanto")


def match_at(toks: tuple[str, ...], i: int, phrase: Phrase) -> bool:
    if i < 0 or i + len(phrase) > len(toks):
        return False
    for k, word in enumerate(phrase):
        tok = toks[i + k]
        if word.endswith("*"):
            if not tok.startswith(word[:-1]):
                return False
        elif tok != word:
            return False
    return True


# Tables are matched through an index of their phrases' first words, built once per table: the
# gate reads every clause with dozens of tables of hundreds of phrases.
_INDEX: dict[int, tuple[object, dict[str, list[tuple[int, Phrase]]], dict[str, list[tuple[str, int, Phrase]]]]] = {}


def _index(table: Iterable[Phrase]):
    entry = _INDEX.get(id(table))
    if entry is None or entry[0] is not table:
        exact: dict[str, list[tuple[int, Phrase]]] = {}
        starred: dict[str, list[tuple[str, int, Phrase]]] = {}
        for rank, phrase in enumerate(table):
            first = phrase[0]
            if first.endswith("*"):
                stem = first[:-1]
                starred.setdefault(stem[:2], []).append((stem, rank, phrase))
            else:
                exact.setdefault(first, []).append((rank, phrase))
        entry = _INDEX[id(table)] = (table, exact, starred)
    return entry[1], entry[2]


_CANDIDATES: dict[tuple[int, str], list[tuple[int, Phrase]]] = {}


def _candidates(tok: str, table: Iterable[Phrase]) -> list[tuple[int, Phrase]]:
    """The phrases of `table` that can start at a token `tok`, longest first (cached: the tables
    live as long as the process, and customers use few distinct words)."""
    key = (id(table), tok)
    found = _CANDIDATES.get(key)
    if found is None:
        if len(_CANDIDATES) > 200_000:
            _CANDIDATES.clear()
        found = _CANDIDATES[key] = _find_candidates(tok, table)
    return found


def _find_candidates(tok: str, table: Iterable[Phrase]) -> list[tuple[int, Phrase]]:
    exact, starred = _index(table)
    found = list(exact.get(tok, ()))
    for stem, rank, phrase in starred.get(tok[:2], ()):
        if tok.startswith(stem):
            found.append((rank, phrase))
    return sorted(found)


def longest_at(toks: tuple[str, ...], i: int, table: Iterable[Phrase]) -> Phrase | None:
    """The longest phrase of `table` that matches at position `i`, if any."""
    if i < 0 or i >= len(toks):
        return None
    return next((phrase for _, phrase in _candidates(toks[i], table) if match_at(toks, i, phrase)), None)


def at(toks: tuple[str, ...], i: int, table: Iterable[Phrase]) -> bool:
    """Does some phrase of `table` match at position `i`?"""
    if i < 0 or i >= len(toks):
        return False
    return any(match_at(toks, i, phrase) for _, phrase in _candidates(toks[i], table))


def spans(toks: tuple[str, ...], table: Iterable[Phrase]) -> list[tuple[int, int]]:
    """(start, end) of every match of any phrase of `table` in `toks` (longest first, then the
    table's order, no overlap)."""
    matches = [
        (-len(phrase), rank, i)
        for i, tok in enumerate(toks)
        for rank, phrase in _candidates(tok, table)
        if match_at(toks, i, phrase)
    ]
    taken = [False] * len(toks)
    out = []
    for neg_len, _, i in sorted(matches):
        end = i - neg_len
        if any(taken[i:end]):
            continue
        out.append((i, end))
        for k in range(i, end):
            taken[k] = True
    return sorted(out)


def has(toks: tuple[str, ...], table: Iterable[Phrase]) -> bool:
    return any(at(toks, i, table) for i in range(len(toks)))


def starts_with(toks: tuple[str, ...], table: Iterable[Phrase]) -> bool:
    return at(toks, 0, table)
