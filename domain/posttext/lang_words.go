package posttext

import "strings"

// latinLanguages are the Latin-script languages DetectLanguage knows, in
// the order ties are broken.
var latinLanguages = []string{"en", "es", "pt", "fr", "de", "it", "nl", "tr", "id", "sv", "pl", "vi"}

// commonWords are about a hundred frequent words per language (fewer for
// Vietnamese, whose letters decide): function words first, then words
// common in short posts. Lower case, NFC, split at apostrophes as
// latinWords does.
var commonWords = map[string]string{
	"en": `the be to of and a in that have i it for not on with he as you do at this but his by
		from they we say her she or an will my one all would there their what so up out if about
		who get which go me when make can like time no just him know take people into year your
		good some could them see other than then now look only come its over think also back after
		use two how our work first well way even new want because any these give day most us is
		are was were been has had did does am really today thank thanks love please very much here
		why where should going got let more too yes need never always every happy great right still
		those something everyone morning night tonight`,
	"es": `de la que el en y a los se del las un por con no una su para es al lo como más pero
		sus le ya o fue este ha sí porque esta son entre cuando muy sin sobre también me hasta hay
		donde quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto
		mí antes algunos qué unos yo otro otras otra él tanto esa estos mucho nada muchos cual
		poco ella estar estas algo nosotros mi mis tú te ti tu tus estoy estás está estamos están
		hola gracias buenos buenas días día hoy mañana noche ahora siempre nunca bien mejor vamos
		quiero tengo tiene hacer puede amigos feliz gente vida año años`,
	"pt": `de a o que e do da em um para é com não uma os no se na por mais as dos como mas foi
		ao ele das tem à seu sua ou ser quando muito há nos já está eu também só pelo pela até isso
		ela entre era depois sem mesmo aos ter seus quem nas me esse eles estão você tinha foram
		essa num nem suas meu às minha têm numa pelos elas havia seja qual será nós tenho lhe deles
		essas esses pelas este dele tu te vocês vos lhes meus minhas teu tua nosso nossa isto
		aquilo estou estamos obrigado obrigada hoje agora bom dia boa noite tudo bem coisa gente
		ainda sempre nunca aqui onde porque pra pro vai vou fazer ano anos`,
	"fr": `le la les de des du un une et est en que qui dans pour pas sur au avec ce il elle je
		tu nous vous ils elles on ne se sa son ses mais ou où plus par comme tout tous toute bien
		très être avoir fait faire sont été aux cette ces mon ma mes ton ta tes notre votre leur
		leurs y à lui même aussi peut encore déjà alors quand donc toujours rien moi toi merci
		bonjour bonsoir aujourd hui demain oui non c j qu l d n suis ai as avons avez ont était
		sans chez vraiment trop beaucoup quoi pourquoi`,
	"de": `der die das und ist nicht ein eine einen einem einer zu den dem des mit von auf für
		im in es sich auch als an er sie wir ihr ich du aber wie so noch nur nach bei aus wenn wird
		werden wurde hat haben habe sind war waren kann können muss mehr schon jetzt hier heute
		immer was wer wo warum dass weil oder doch ja nein mal man mein meine dein uns euch sehr
		gut viel danke bitte alle diese dieser dieses zum zur vom am um über gegen ohne bis kein
		keine nichts etwas gibt geht machen neue neuen morgen tag dich mich dir mir schön`,
	"it": `il lo la i gli le di da in con su per tra fra un uno una e è ed che non si mi ti ci
		vi ne del della dello dei degli delle al allo alla ai agli alle dal dalla nel nella nei
		sul sulla ma come anche più molto questo questa questi quello quella sono sei siamo siete
		hanno ho ha abbiamo avete essere avere fare cosa tutto tutti sempre ancora già oggi
		domani grazie ciao buongiorno buonasera bene perché quando dove chi io lui lei noi voi
		loro mio mia suo sua nostro dell nell all dall sull c l d così solo poi fatto stato`,
	"nl": `de het een en van in is dat op te zijn voor met niet aan er die ook als maar om bij
		of dan nog wel naar uit zo heb hebben heeft was werd wordt worden door over kan kunnen moet
		je jij ik we wij hij zij ze u mijn jouw onze hun haar dit deze wat wie waar hoe waarom geen
		meer al toch nu hier daar veel heel goed mooi dag dank bedankt graag even alles iets niets
		echt weer gaan gaat komt komen ja nee vandaag morgen`,
	"tr": `ve bir bu da de için ile çok ne ben sen o biz siz onlar gibi daha var yok ama değil
		olarak kadar sonra en mi mı mu mü ki şey her ya veya diye bunu şu olan olduğu oldu olur
		olsun şimdi bugün yarın nasıl neden niye kim nerede burada iyi güzel teşekkürler teşekkür
		merhaba evet hayır tamam hep hiç bütün tüm bana sana beni seni benim senin onun bizim
		sizin artık bile hem çünkü eğer sadece ise diğer yeni büyük kendi zaman gün yıl`,
	"id": `yang dan di ke dari ini itu dengan untuk tidak ada akan pada juga saya kamu kami kita
		mereka dia anda aku sudah belum bisa harus atau tapi karena jika kalau sebagai dalam oleh
		seperti lebih sangat banyak hanya saja lagi sama masih mau ingin apa siapa bagaimana
		mengapa kenapa kapan hari terima kasih selamat pagi malam baik orang bukan jadi buat sih
		nya gak nggak udah aja dong deh yg dgn utk semua`,
	"sv": `och i att det som en på är av för med till den har de inte om ett han men var jag sig
		från vi så kan man när år hon under också efter eller nu sin där vid mot ska skulle kommer
		ut får finns vara hade alla andra mycket än här då sedan över bara blir upp även vad två
		vill ha många hur mer går detta nya utan något allt fick måste mellan blev bli dag någon
		några bättre tack hej idag aldrig alltid varför vem ja nej`,
	"pl": `i w z na się nie do to że a o jak ale co jest po tak za od go już jego jej ich mnie
		mi ci my wy oni ona on ja ty był była było były będzie są jestem jesteś może można tylko
		także też bardzo przez przy dla pod nad bez ten ta te tego tej tym który która które czy
		gdy kiedy gdzie dlaczego dziś dzisiaj jutro wczoraj dziękuję dzięki cześć dzień dobry
		dobrze wszystko wszyscy nic coś ktoś jeszcze teraz tutaj tam więc bo oraz lub albo niż
		aby żeby jeśli`,
	"vi": `của và là có không được người những một các cho với này trong đã tôi bạn anh em rất
		cảm ơn khi để đến từ thì cũng như mà nhưng sẽ đang nào gì ở ra vào lại làm`,
}

// letterMarkers are letters only one of the known languages writes.
var letterMarkers = []struct{ lang, letters string }{
	{"es", "ñ"},
	{"pt", "ãõ"},
	{"de", "ß"},
	{"fr", "œ"},
	{"tr", "ğış"},
	{"pl", "łąęśźżćń"},
	{"sv", "å"},
	{"vi", "đơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"},
}

// wordLanguages maps a common word to the languages that list it.
var wordLanguages = invertWords(commonWords)

func invertWords(lists map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, lang := range latinLanguages {
		for _, w := range strings.Fields(lists[lang]) {
			if !contains(out[w], lang) {
				out[w] = append(out[w], lang)
			}
		}
	}
	return out
}
