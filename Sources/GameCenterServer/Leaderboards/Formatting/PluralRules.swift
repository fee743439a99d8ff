/// The CLDR cardinal plural rule of one language, hand-coded from CLDR 46 (the data of ICU 76).
///
/// Languages without an entry here use the `other`-only rule, which is always grammatical if not
/// always idiomatic.
struct PluralRules: Sendable, Equatable {
    /// A group of languages that share one CLDR cardinal rule.
    enum Family: String, Sendable, CaseIterable {
        /// `other` only (ja, zh, ko, id, th, vi, …).
        case otherOnly
        /// one: i = 1 and v = 0 (en, de, nl, sv, fi, …).
        case oneForIntegerOne
        /// one: n = 1 (tr, el, hu, nb, bg, …).
        case oneForNOne
        /// one: i = 0,1; many: a non-zero multiple of a million (fr, pt).
        case oneForZeroOrOneWithMillions
        /// one: i = 1 and v = 0; many: a non-zero multiple of a million (it, ca, pt-PT).
        case oneForIntegerOneWithMillions
        /// one: n = 1; many: a non-zero multiple of a million (es).
        case oneForNOneWithMillions
        /// one / few / many by the last digits of whole numbers (ru, uk).
        case eastSlavic
        /// one / few / many, with `one` only for 1 itself (pl).
        case polish
        /// one: 1; few: 2–4; many: any decimal (cs, sk).
        case czechSlovak
        /// zero / one / two / few / many (ar).
        case arabic
        /// one: n = 1 or t != 0 and i = 0,1 (da).
        case danish
        /// one: i = 0 or n = 1 (hi, bn, fa, …).
        case oneForZeroIntegerOrNOne
        /// one / two (he).
        case hebrew
        /// one / few (ro).
        case romanian
        /// one / few by last digits of both the integer and the fraction (hr, sr, bs).
        case serboCroatian
        /// one / few / many by the last digits of `n`, decimals included (be).
        case belarusian
        /// one / few by the last digits of `n`; many for any non-zero fraction (lt).
        case lithuanian
        /// zero / one by the last digits of `n` and of two-digit fractions (lv).
        case latvian
        /// one / two / few by the last two integer digits (sl).
        case slovenian
        /// one unless the last digit is 4, 6 or 9 (fil).
        case filipino
        /// one by the last digits of the integer or of the trailing-zero-free fraction (is).
        case icelandic
        /// one by the last digits of the integer or the fraction (mk).
        case macedonian
    }

    /// CLDR language codes this type knows, mapped to their rule; `pt-PT` is special-cased by region.
    private static let families: [String: Family] = {
        var table: [String: Family] = [:]
        func add(_ family: Family, _ languages: String) {
            for language in languages.split(whereSeparator: \.isWhitespace) { table[String(language)] = family }
        }
        add(.otherOnly, "ja zh ko yue id in ms th vi my km lo jv su")
        add(.oneForIntegerOne, "en de nl sv fi et gl sw ur fy ast ia io lij sc yi ji")
        add(
            .oneForNOne,
            """
            tr el hu nb no nn bg af an asa az bal bem bez brx ce cgg chr ckb dv ee eo eu fo fur gsw ha haw jgo jmc \
            ka kaj kcg kk kkj kl ks ksb ku ky lb lg mas mgo ml mn mr nah nd ne nnh nr ny nyn om or os pap ps rm \
            rof rwk saq sd sdh seh sn so sq ss ssy st syr ta te teo tig tk tn ts ug uz ve vo vun wae xh xog
            """)
        add(.oneForZeroOrOneWithMillions, "fr pt")
        add(.oneForIntegerOneWithMillions, "it ca vec scn")
        add(.oneForNOneWithMillions, "es")
        add(.eastSlavic, "ru uk")
        add(.polish, "pl")
        add(.czechSlovak, "cs sk")
        add(.arabic, "ar")
        add(.danish, "da")
        add(.oneForZeroIntegerOrNOne, "hi bn fa gu kn am zu as doi pcm")
        add(.hebrew, "he iw")
        add(.romanian, "ro mo")
        add(.serboCroatian, "hr sr bs sh")
        add(.belarusian, "be")
        add(.lithuanian, "lt")
        add(.latvian, "lv")
        add(.slovenian, "sl")
        add(.filipino, "fil tl")
        add(.icelandic, "is")
        add(.macedonian, "mk")
        return table
    }()

    /// The rule this instance applies.
    let family: Family

    /// The rule of the language of `localeIdentifier` (`de-AT`, `pt_PT`, …); `other`-only when unknown.
    init(localeIdentifier: String) {
        let subtags = localeIdentifier.split(whereSeparator: { $0 == "-" || $0 == "_" || $0 == "@" || $0 == "." })
        let language = subtags.first.map { $0.lowercased() } ?? ""
        // Portugal's rule differs from Brazil's and the `pt` default; the region may follow a script subtag.
        if language == "pt", subtags.dropFirst().prefix(2).contains(where: { $0.uppercased() == "PT" }) {
            family = .oneForIntegerOneWithMillions
        } else {
            family = Self.families[language] ?? .otherOnly
        }
    }

    /// A rule chosen directly by family.
    init(family: Family) {
        self.family = family
    }

    /// The category of the number described by `operands`.
    func category(for operands: PluralOperands) -> PluralCategory {
        let i = operands.i
        let v = operands.v
        switch family {
        case .otherOnly:
            return .other
        case .oneForIntegerOne:
            return i == 1 && v == 0 ? .one : .other
        case .oneForNOne:
            return operands.n(is: 1) ? .one : .other
        case .oneForZeroOrOneWithMillions:
            if i <= 1 { return .one }
            return Self.isWholeMillions(operands) ? .many : .other
        case .oneForIntegerOneWithMillions:
            if i == 1 && v == 0 { return .one }
            return Self.isWholeMillions(operands) ? .many : .other
        case .oneForNOneWithMillions:
            if operands.n(is: 1) { return .one }
            return Self.isWholeMillions(operands) ? .many : .other
        case .eastSlavic:
            guard v == 0 else { return .other }
            let mod10 = i % 10
            let mod100 = i % 100
            if mod10 == 1 && mod100 != 11 { return .one }
            if (2...4).contains(mod10) && !(12...14).contains(mod100) { return .few }
            return .many
        case .polish:
            guard v == 0 else { return .other }
            if i == 1 { return .one }
            let mod10 = i % 10
            let mod100 = i % 100
            if (2...4).contains(mod10) && !(12...14).contains(mod100) { return .few }
            return .many
        case .czechSlovak:
            if v != 0 { return .many }
            if i == 1 { return .one }
            return (2...4).contains(i) ? .few : .other
        case .arabic:
            if operands.n(is: 0) { return .zero }
            if operands.n(is: 1) { return .one }
            if operands.n(is: 2) { return .two }
            guard let mod100 = operands.n(modulo: 100) else { return .other }
            if (3...10).contains(mod100) { return .few }
            if (11...99).contains(mod100) { return .many }
            return .other
        case .danish:
            return operands.n(is: 1) || (operands.t != 0 && i <= 1) ? .one : .other
        case .oneForZeroIntegerOrNOne:
            return i == 0 || operands.n(is: 1) ? .one : .other
        case .hebrew:
            if (i == 1 && v == 0) || (i == 0 && v != 0) { return .one }
            return i == 2 && v == 0 ? .two : .other
        case .romanian:
            if i == 1 && v == 0 { return .one }
            if v != 0 || i == 0 { return .few }
            return (1...19).contains(i % 100) ? .few : .other
        case .serboCroatian:
            let f = operands.f
            let integerMod10 = i % 10, integerMod100 = i % 100
            let fractionMod10 = f % 10, fractionMod100 = f % 100
            if (v == 0 && integerMod10 == 1 && integerMod100 != 11) || (fractionMod10 == 1 && fractionMod100 != 11) {
                return .one
            }
            if (v == 0 && (2...4).contains(integerMod10) && !(12...14).contains(integerMod100))
                || ((2...4).contains(fractionMod10) && !(12...14).contains(fractionMod100))
            {
                return .few
            }
            return .other
        case .belarusian:
            guard let mod10 = operands.n(modulo: 10), let mod100 = operands.n(modulo: 100) else { return .other }
            if mod10 == 1 && mod100 != 11 { return .one }
            if (2...4).contains(mod10) && !(12...14).contains(mod100) { return .few }
            return .many
        case .lithuanian:
            guard let mod10 = operands.n(modulo: 10), let mod100 = operands.n(modulo: 100) else { return .many }
            if (11...19).contains(mod100) { return .other }
            if mod10 == 1 { return .one }
            return mod10 >= 2 ? .few : .other
        case .latvian:
            let f = operands.f
            let mod10 = operands.n(modulo: 10), mod100 = operands.n(modulo: 100)
            if mod10 == 0 || mod100.map({ (11...19).contains($0) }) == true || (v == 2 && (11...19).contains(f % 100)) {
                return .zero
            }
            if (mod10 == 1 && mod100 != 11) || (v == 2 && f % 10 == 1 && f % 100 != 11) || (v != 2 && f % 10 == 1) {
                return .one
            }
            return .other
        case .slovenian:
            guard v == 0 else { return .few }
            switch i % 100 {
            case 1: return .one
            case 2: return .two
            case 3, 4: return .few
            default: return .other
            }
        case .filipino:
            if v == 0 { return (1...3).contains(i) || ![4, 6, 9].contains(i % 10) ? .one : .other }
            return ![4, 6, 9].contains(operands.f % 10) ? .one : .other
        case .icelandic:
            let t = operands.t
            return (t == 0 && i % 10 == 1 && i % 100 != 11) || (t % 10 == 1 && t % 100 != 11) ? .one : .other
        case .macedonian:
            let f = operands.f
            return (v == 0 && i % 10 == 1 && i % 100 != 11) || (f % 10 == 1 && f % 100 != 11) ? .one : .other
        }
    }

    /// The CLDR `many` condition shared by fr, pt, it, ca and es: `e = 0 and i != 0 and i % 1000000 = 0 and v = 0`.
    private static func isWholeMillions(_ operands: PluralOperands) -> Bool {
        operands.v == 0 && operands.i != 0 && operands.i % 1_000_000 == 0
    }
}
