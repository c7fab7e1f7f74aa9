package validation

import (
	"fmt"
	"strings"
	"time"
)

// currencyMinorUnits is the ISO 4217 minor unit (decimal places) of every
// currency in circulation (the standard's list of 2025, without funds,
// precious metals, SDR, bond units, test and no-currency codes); a code
// not listed here has 2.
var currencyMinorUnits = func() map[string]int {
	out := map[string]int{}
	for _, code := range strings.Fields(iso4217) {
		out[code] = 2
	}
	for _, code := range strings.Fields("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF") {
		out[code] = 0
	}
	for _, code := range strings.Fields("BHD IQD JOD KWD LYD OMR TND") {
		out[code] = 3
	}
	return out
}()

// IsCurrency reports whether code (upper case) is an ISO 4217 currency
// code in circulation.
func IsCurrency(code string) bool {
	_, ok := currencyMinorUnits[code]
	return ok
}

// MinorUnits is the number of decimal places of currency code (ISO 4217:
// 0 for JPY, 2 for USD, 3 for KWD); ok is false for a code that is not a
// currency in circulation.
func MinorUnits(code string) (digits int, ok bool) {
	digits, ok = currencyMinorUnits[code]
	return digits, ok
}

// MicroStep is the smallest amount of currency code in micros (millionths
// of its unit) that is a whole number of its minor unit: 1,000,000 for
// JPY, 10,000 for USD, 1,000 for KWD. It is 0 for a code that is not a
// currency.
func MicroStep(code string) int64 {
	digits, ok := currencyMinorUnits[code]
	if !ok {
		return 0
	}
	step := int64(1_000_000)
	for range digits {
		step /= 10
	}
	return step
}

// MicroAmountError says what is wrong with micros, an amount of currency
// code in millionths of its unit: "" when it is a whole number of the
// currency's minor unit (1.5 JPY, 1,500,000 micros, is not: JPY has no
// minor unit).
func MicroAmountError(micros int64, code string) string {
	step := MicroStep(code)
	if step == 0 || micros%step == 0 {
		return ""
	}
	digits, _ := MinorUnits(code)
	if digits == 0 {
		return fmt.Sprintf("%s has no minor unit: the amount must be a multiple of %d micros (one whole %s)", code, step, code)
	}
	return fmt.Sprintf("%s has %d decimal places: the amount must be a multiple of %d micros", code, digits, step)
}

// UTC offsets of the world's time zones: a time with another offset
// (encoding/json and time.Parse take anything within ±23:59) names no
// place's time.
const (
	MinUTCOffset = -12 * time.Hour
	MaxUTCOffset = 14 * time.Hour
)

// OffsetError says what is wrong with the UTC offset of t as parsed (its
// zone as written): "" when it is between -12:00 and +14:00.
func OffsetError(t time.Time) string {
	_, secs := t.Zone()
	off := time.Duration(secs) * time.Second
	if off >= MinUTCOffset && off <= MaxUTCOffset {
		return ""
	}
	return fmt.Sprintf("its UTC offset %s is outside -12:00 to +14:00", t.Format("-07:00"))
}

// MaxYear is the last year a time may fall in: PostgreSQL and RFC 3339
// write four-digit years, so a time after 9999 (a far effective_at plus a
// default duration) would not read back as written.
const MaxYear = 9999

// iso4217 lists the ISO 4217 codes of currencies in circulation (the
// standard's list of 2025, without funds, precious metals, SDR, bond
// units, test and no-currency codes), each followed by a space.
const iso4217 = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD " +
	"CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF " +
	"GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR " +
	"LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK " +
	"PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT " +
	"TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG "
