package posttext

import "testing"

func TestDetectLanguage(t *testing.T) {
	tests := []struct{ want, text string }{
		{"en", "I can't believe how good this new album is, listening to it all day"},
		{"en", "Happy birthday @john! Have a great day 🎉 https://example.com/cake"},
		{"en", "Is it me or is the internet slow today?"},
		{"es", "Hola a todos, ¿cómo están? Hoy es un gran día"},
		{"es", "No puedo creer que ya sea viernes otra vez"},
		{"pt", "Bom dia! Hoje vou ao cinema com os meus amigos"},
		{"pt", "Não acredito que já é sexta-feira de novo"},
		{"fr", "Bonjour à tous, c'est une belle journée aujourd'hui"},
		{"fr", "Je ne sais pas ce que tu veux dire"},
		{"de", "Ich habe heute keine Zeit, vielleicht morgen"},
		{"de", "Das ist wirklich eine gute Idee, danke dir"},
		{"it", "Ciao a tutti, oggi è una bellissima giornata"},
		{"it", "Non vedo l'ora di andare al mare con gli amici"},
		{"nl", "Ik heb vandaag geen tijd, misschien morgen"},
		{"nl", "Dit is echt een heel mooi liedje"},
		{"tr", "Bugün hava çok güzel, dışarı çıkalım mı?"},
		{"id", "Saya tidak tahu apa yang harus saya lakukan hari ini"},
		{"sv", "Jag har inte tid idag, kanske imorgon"},
		{"pl", "Nie mam dzisiaj czasu, może jutro"},
		{"vi", "Tôi rất vui được gặp bạn hôm nay"},
		{"ja", "今日はとても暑いですね"},
		{"ja", "新しいiPhoneを買いました！"},
		{"zh", "我今天很高兴，天气也很好"},
		{"ko", "오늘 날씨가 정말 좋네요"},
		{"ar", "مرحبا بكم في عالمنا الجميل"},
		{"fa", "این یک جمله فارسی است"},
		{"ur", "آپ کیسے ہیں؟ میں ٹھیک ہوں"},
		{"ru", "Привет, как дела? Всё хорошо"},
		{"uk", "Привіт, як справи? Все добре, дякую"},
		{"sr", "Ја сам добро, хвала. Његова кућа је велика"},
		{"he", "שלום לכולם, מה שלומכם?"},
		{"th", "สวัสดีครับ วันนี้อากาศดีมาก"},
		{"el", "Καλημέρα σε όλους"},
		{"hi", "आज मौसम बहुत अच्छा है"},
		{"und", ""},
		{"und", "https://example.com @user #hashtag $AAPL 😀 123"},
		{"und", "#buenosdias @maria https://example.com jaja"},
		{"und", "ok"},
		{"und", "lol"},
		{"und", "Real Madrid vs Barcelona 2-1"},
		{"und", "👍👍👍 !!!"},
		{"und", "好"},
		{"und", "Hyvää huomenta kaikille, tänään on kaunis päivä"},
		{"und", "Bună dimineața tuturor, astăzi este o zi frumoasă"},
		{"und", "Привет hello こんにちは مرحبا"},
	}
	for _, tt := range tests {
		if got := DetectLanguage(tt.text); got != tt.want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
