// Prints the `platformCases` rows of Tests/ScoreFormattingTests/NumericFormatTests.swift from this machine's
// NumberFormatter, so the pinned expectations can be regenerated (and diffed) when Foundation's ICU data changes.
//
//     swiftc -O Tools/pinned-number-cases.swift -o /tmp/pinned && /tmp/pinned
import Foundation

func escaped(_ text: String) -> String {
    text.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined()
}

let values: [Int64] = [0, 1, -1, 999, 1000, 123456, -123456, 1234567890123]
let styles: [(name: String, style: NumberFormatter.Style, fractionDigits: Int, currency: String)] = [
    ("integer", .decimal, 0, ""), ("fixedPoint1", .decimal, 1, ""), ("fixedPoint2", .decimal, 2, ""),
    ("fixedPoint3", .decimal, 3, ""), ("moneyWhole", .currency, 0, "USD"), ("money2", .currency, 2, "USD"),
    ("money2", .currency, 2, "EUR"), ("money2", .currency, 2, "JPY"), ("moneyWhole", .currency, 0, "JPY"),
]
for locale in ["en", "de", "fr", "ja"] {
    for entry in styles {
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: locale)
        formatter.numberStyle = entry.style
        if !entry.currency.isEmpty { formatter.currencyCode = entry.currency }
        formatter.minimumFractionDigits = entry.fractionDigits
        formatter.maximumFractionDigits = entry.fractionDigits
        var scale = 1.0
        for _ in 0..<entry.fractionDigits { scale *= 10 }
        let currencyArgument = entry.currency.isEmpty || entry.currency == "USD" ? "" : ", currency: \"\(entry.currency)\""
        var rows: [(String, String)] = values.map { value in
            let number = entry.fractionDigits == 0 ? NSNumber(value: value) : NSNumber(value: Double(value) / scale)
            return (String(value), formatter.string(from: number)!)
        }
        // Whole numbers are exact through NSNumber(Int64); fractional extremes are pinned by hand in `extremeCases`.
        if entry.fractionDigits == 0 {
            rows.append((".max", formatter.string(from: NSNumber(value: Int64.max))!))
            rows.append((".min", formatter.string(from: NSNumber(value: Int64.min))!))
        }
        for (value, text) in rows {
            print("        .init(\"\(locale)\", .\(entry.name), \(value), \"\(escaped(text))\"\(currencyArgument)),")
        }
    }
}
