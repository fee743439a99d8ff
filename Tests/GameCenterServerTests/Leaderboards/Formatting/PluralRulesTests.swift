import Foundation
import Testing
@testable import GameCenterServer

/// One language's expected categories, as `(number as displayed, category)`.
struct PluralTable: Sendable, CustomTestStringConvertible {
    /// The locale identifier the rule is looked up by.
    var locale: String
    /// Numbers as displayed (`"1.00"` has two visible fraction digits) and their categories.
    var rows: [(number: String, category: PluralCategory)]

    /// A table for `locale`.
    init(_ locale: String, _ rows: [(String, PluralCategory)]) {
        self.locale = locale
        self.rows = rows.map { (number: $0.0, category: $0.1) }
    }

    /// Shown in test reports.
    var testDescription: String { "\(locale) (\(rows.count) numbers)" }
}

/// CLDR cardinal rules. Every expected category below was produced by ICU 76 (`uplrules_selectFormatted`
/// on a number formatted with exactly the shown fraction digits) on this platform and pinned here; the
/// hand-coded rules were also compared with ICU for all 1,034 available locales on 600 numbers each.
@Suite("Plural rules")
struct PluralRulesTests {
    static let tables: [PluralTable] = [
        PluralTable(
            "en",
            [
                ("1", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other),
                ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "de",
            [
                ("1", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other),
                ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "fr",
            [
                ("0", .one), ("1", .one), ("0.0", .one), ("0.1", .one), ("1.0", .one), ("1.500", .one),
                ("0.5", .one), ("1.00", .one), ("1.5", .one), ("0.11", .one), ("1.21", .one),
                ("1000000", .many), ("2000000", .many), ("10000000", .many), ("21000000", .many), ("1000000000", .many),
                ("2", .other), ("3", .other), ("4", .other), ("112", .other), ("1112", .other), ("132", .other),
                ("2.0", .other), ("2.1", .other), ("14.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "ja",
            [
                ("0", .other), ("1", .other), ("2", .other), ("112", .other), ("1112", .other), ("133", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("3", .other), ("5", .other),
                ("11", .other), ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other),
                ("1000000", .other), ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "es",
            [
                ("1", .one), ("1.0", .one), ("1.00", .one), ("1.000", .one),
                ("1000000", .many), ("2000000", .many), ("10000000", .many), ("21000000", .many), ("1000000000", .many),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("131", .other),
                ("0.0", .other), ("0.1", .other), ("12.22", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("0.5", .other),
                ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("0.11", .other), ("1.21", .other),
                ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "it",
            [
                ("1", .one),
                ("1000000", .many), ("2000000", .many), ("10000000", .many), ("21000000", .many), ("1000000000", .many),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("131", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("0.5", .other),
                ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other),
                ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "pt",
            [
                ("0", .one), ("1", .one), ("0.0", .one), ("0.1", .one), ("1.0", .one), ("1.500", .one),
                ("0.5", .one), ("1.00", .one), ("1.5", .one), ("0.11", .one), ("1.21", .one),
                ("1000000", .many), ("2000000", .many), ("10000000", .many), ("21000000", .many), ("1000000000", .many),
                ("2", .other), ("3", .other), ("4", .other), ("112", .other), ("1112", .other), ("132", .other),
                ("2.0", .other), ("2.1", .other), ("14.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "pt_PT",
            [
                ("1", .one),
                ("1000000", .many), ("2000000", .many), ("10000000", .many), ("21000000", .many), ("1000000000", .many),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("131", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("0.5", .other),
                ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other),
                ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "nl",
            [
                ("1", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other),
                ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "sv",
            [
                ("1", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other),
                ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "ru",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("101", .one),
                ("2", .few), ("3", .few), ("4", .few), ("243", .few), ("244", .few), ("132", .few),
                ("22", .few),
                ("0", .many), ("5", .many), ("6", .many), ("112", .many), ("1112", .many), ("136", .many),
                ("11", .many), ("25", .many), ("111", .many), ("1000000", .many),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("0.5", .other), ("1.0", .other),
                ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("0.11", .other),
                ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "uk",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("101", .one),
                ("2", .few), ("3", .few), ("4", .few), ("243", .few), ("244", .few), ("132", .few),
                ("22", .few),
                ("0", .many), ("5", .many), ("6", .many), ("112", .many), ("1112", .many), ("136", .many),
                ("11", .many), ("25", .many), ("111", .many), ("1000000", .many),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("0.5", .other), ("1.0", .other),
                ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("0.11", .other),
                ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "pl",
            [
                ("1", .one),
                ("2", .few), ("3", .few), ("4", .few), ("243", .few), ("244", .few), ("132", .few),
                ("22", .few),
                ("0", .many), ("5", .many), ("6", .many), ("112", .many), ("1112", .many), ("137", .many),
                ("11", .many), ("21", .many), ("25", .many), ("101", .many), ("111", .many), ("1000000", .many),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("0.5", .other), ("1.0", .other),
                ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("0.11", .other),
                ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "cs",
            [
                ("1", .one),
                ("2", .few), ("3", .few), ("4", .few),
                ("0.0", .many), ("0.1", .many), ("12.21", .many), ("1000000.500", .many), ("0.5", .many), ("1.0", .many),
                ("1.00", .many), ("1.5", .many), ("2.00", .many), ("3.00", .many), ("21.0", .many), ("0.11", .many),
                ("1.21", .many), ("11.0", .many), ("5.000", .many),
                ("0", .other), ("5", .other), ("6", .other), ("112", .other), ("1112", .other), ("135", .other),
                ("11", .other), ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other),
                ("1000000", .other),
            ]),
        PluralTable(
            "ar",
            [
                ("0", .zero), ("0.0", .zero), ("0.00", .zero), ("0.000", .zero),
                ("1", .one), ("1.0", .one), ("1.00", .one), ("1.000", .one),
                ("2", .two), ("2.0", .two), ("2.00", .two), ("2.000", .two),
                ("3", .few), ("4", .few), ("5", .few), ("209", .few), ("210", .few), ("107", .few),
                ("3.0", .few), ("3.00", .few), ("5.00", .few), ("10.000", .few), ("5.000", .few),
                ("11", .many), ("12", .many), ("13", .many), ("112", .many), ("1112", .many), ("134", .many),
                ("11.0", .many), ("11.00", .many), ("21.0", .many), ("111.000", .many), ("21", .many), ("22", .many),
                ("25", .many), ("111", .many),
                ("100", .other), ("101", .other), ("102", .other), ("21000000", .other), ("1000000000", .other), ("10000", .other),
                ("0.1", .other), ("0.2", .other), ("12.100", .other), ("1000000.500", .other), ("1000000", .other), ("0.5", .other),
                ("1.5", .other), ("0.11", .other), ("1.21", .other),
            ]),
        PluralTable(
            "zh",
            [
                ("0", .other), ("1", .other), ("2", .other), ("112", .other), ("1112", .other), ("133", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("3", .other), ("5", .other),
                ("11", .other), ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other),
                ("1000000", .other), ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "ko",
            [
                ("0", .other), ("1", .other), ("2", .other), ("112", .other), ("1112", .other), ("133", .other),
                ("0.0", .other), ("0.1", .other), ("12.21", .other), ("1000000.500", .other), ("3", .other), ("5", .other),
                ("11", .other), ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other),
                ("1000000", .other), ("0.5", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("0.11", .other), ("1.21", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "he",
            [
                ("1", .one), ("0.0", .one), ("0.1", .one), ("0.21", .one), ("0.500", .one), ("0.5", .one),
                ("0.11", .one),
                ("2", .two),
                ("0", .other), ("3", .other), ("4", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("1.0", .other), ("1.1", .other), ("14.0", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("1.00", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("1.21", .other),
                ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "ro",
            [
                ("1", .one),
                ("0", .few), ("2", .few), ("3", .few), ("112", .few), ("1112", .few), ("114", .few),
                ("0.0", .few), ("0.1", .few), ("12.21", .few), ("1000000.500", .few), ("5", .few), ("11", .few),
                ("101", .few), ("111", .few), ("0.5", .few), ("1.0", .few), ("1.00", .few), ("1.5", .few),
                ("2.00", .few), ("3.00", .few), ("21.0", .few), ("0.11", .few), ("1.21", .few), ("11.0", .few),
                ("5.000", .few),
                ("20", .other), ("21", .other), ("22", .other), ("21000000", .other), ("1000000000", .other), ("140", .other),
                ("25", .other), ("1000000", .other),
            ]),
        PluralTable(
            "lt",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("1.0", .one), ("1.00", .one), ("21.00", .one), ("101.000", .one), ("101", .one), ("21.0", .one),
                ("2", .few), ("3", .few), ("4", .few), ("248", .few), ("249", .few), ("132", .few),
                ("2.0", .few), ("2.00", .few), ("7.0", .few), ("102.000", .few), ("5", .few), ("22", .few),
                ("25", .few), ("3.00", .few), ("5.000", .few),
                ("0.1", .many), ("0.2", .many), ("12.21", .many), ("1000000.500", .many), ("0.5", .many), ("1.5", .many),
                ("0.11", .many), ("1.21", .many),
                ("0", .other), ("10", .other), ("11", .other), ("112", .other), ("1112", .other), ("150", .other),
                ("0.0", .other), ("0.00", .other), ("14.0", .other), ("1000000.000", .other), ("111", .other), ("1000000", .other),
                ("11.0", .other),
            ]),
        PluralTable(
            "lv",
            [
                ("0", .zero), ("10", .zero), ("11", .zero), ("112", .zero), ("1112", .zero), ("150", .zero),
                ("0.0", .zero), ("0.00", .zero), ("12.000", .zero), ("1000000.000", .zero), ("111", .zero), ("1000000", .zero),
                ("0.11", .zero), ("11.0", .zero),
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("0.1", .one), ("0.01", .one), ("12.011", .one), ("1000000.111", .one), ("101", .one), ("1.0", .one),
                ("1.00", .one), ("21.0", .one), ("1.21", .one),
                ("2", .other), ("3", .other), ("4", .other), ("248", .other), ("249", .other), ("132", .other),
                ("0.2", .other), ("0.5", .other), ("12.2", .other), ("1000000.500", .other), ("5", .other), ("22", .other),
                ("25", .other), ("1.5", .other), ("2.00", .other), ("3.00", .other), ("5.000", .other),
            ]),
        PluralTable(
            "sl",
            [
                ("1", .one), ("101", .one), ("201", .one), ("1001", .one), ("1000001", .one),
                ("2", .two), ("102", .two), ("202", .two),
                ("3", .few), ("4", .few), ("103", .few), ("203", .few), ("204", .few), ("104", .few),
                ("0.0", .few), ("0.1", .few), ("12.21", .few), ("1000000.500", .few), ("0.5", .few), ("1.0", .few),
                ("1.00", .few), ("1.5", .few), ("2.00", .few), ("3.00", .few), ("21.0", .few), ("0.11", .few),
                ("1.21", .few), ("11.0", .few), ("5.000", .few),
                ("0", .other), ("5", .other), ("6", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("11", .other), ("21", .other), ("22", .other), ("25", .other), ("111", .other), ("1000000", .other),
            ]),
        PluralTable(
            "be",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("1.0", .one), ("1.00", .one), ("21.00", .one), ("101.000", .one), ("101", .one), ("21.0", .one),
                ("2", .few), ("3", .few), ("4", .few), ("243", .few), ("244", .few), ("132", .few),
                ("2.0", .few), ("2.00", .few), ("4.00", .few), ("102.000", .few), ("22", .few), ("3.00", .few),
                ("0", .many), ("5", .many), ("6", .many), ("112", .many), ("1112", .many), ("136", .many),
                ("0.0", .many), ("0.00", .many), ("12.00", .many), ("1000000.000", .many), ("11", .many), ("25", .many),
                ("111", .many), ("1000000", .many), ("11.0", .many), ("5.000", .many),
                ("0.1", .other), ("0.2", .other), ("12.21", .other), ("1000000.500", .other), ("0.5", .other), ("1.5", .other),
                ("0.11", .other), ("1.21", .other),
            ]),
        PluralTable(
            "fil",
            [
                ("0", .one), ("1", .one), ("2", .one), ("112", .one), ("1112", .one), ("137", .one),
                ("0.0", .one), ("0.1", .one), ("12.21", .one), ("1000000.500", .one), ("3", .one), ("5", .one),
                ("11", .one), ("21", .one), ("22", .one), ("25", .one), ("101", .one), ("111", .one),
                ("1000000", .one), ("0.5", .one), ("1.0", .one), ("1.00", .one), ("1.5", .one), ("2.00", .one),
                ("3.00", .one), ("21.0", .one), ("0.11", .one), ("1.21", .one), ("11.0", .one), ("5.000", .one),
                ("4", .other), ("6", .other), ("9", .other), ("246", .other), ("249", .other), ("126", .other),
            ]),
        PluralTable(
            "is",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("0.1", .one), ("0.01", .one), ("12.001", .one), ("1000000.100", .one), ("101", .one), ("1.0", .one),
                ("1.00", .one), ("21.0", .one), ("1.21", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("133", .other),
                ("0.0", .other), ("0.2", .other), ("12.11", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("22", .other), ("25", .other), ("111", .other), ("1000000", .other), ("0.5", .other), ("1.5", .other),
                ("2.00", .other), ("3.00", .other), ("0.11", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "da",
            [
                ("1", .one), ("0.1", .one), ("0.2", .one), ("1.1", .one), ("1.500", .one), ("0.5", .one),
                ("1.0", .one), ("1.00", .one), ("1.5", .one), ("0.11", .one), ("1.21", .one),
                ("0", .other), ("2", .other), ("3", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("0.0", .other), ("0.00", .other), ("14.11", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("2.00", .other), ("3.00", .other), ("21.0", .other), ("11.0", .other), ("5.000", .other),
            ]),
        PluralTable(
            "hi",
            [
                ("0", .one), ("1", .one), ("0.0", .one), ("0.1", .one), ("0.22", .one), ("1.000", .one),
                ("0.5", .one), ("1.0", .one), ("1.00", .one), ("0.11", .one),
                ("2", .other), ("3", .other), ("4", .other), ("112", .other), ("1112", .other), ("134", .other),
                ("1.1", .other), ("1.2", .other), ("14.1", .other), ("1000000.500", .other), ("5", .other), ("11", .other),
                ("21", .other), ("22", .other), ("25", .other), ("101", .other), ("111", .other), ("1000000", .other),
                ("1.5", .other), ("2.00", .other), ("3.00", .other), ("21.0", .other), ("1.21", .other), ("11.0", .other),
                ("5.000", .other),
            ]),
        PluralTable(
            "hr",
            [
                ("1", .one), ("21", .one), ("31", .one), ("1021", .one), ("1000001", .one), ("141", .one),
                ("0.1", .one), ("0.01", .one), ("12.21", .one), ("1000000.001", .one), ("101", .one), ("1.21", .one),
                ("2", .few), ("3", .few), ("4", .few), ("243", .few), ("244", .few), ("132", .few),
                ("0.2", .few), ("0.22", .few), ("12.22", .few), ("1000000.22", .few), ("22", .few),
                ("0", .other), ("5", .other), ("6", .other), ("112", .other), ("1112", .other), ("136", .other),
                ("0.0", .other), ("0.5", .other), ("12.50", .other), ("1000000.500", .other), ("11", .other), ("25", .other),
                ("111", .other), ("1000000", .other), ("1.0", .other), ("1.00", .other), ("1.5", .other), ("2.00", .other),
                ("3.00", .other), ("21.0", .other), ("0.11", .other), ("11.0", .other), ("5.000", .other),
            ]),
    ]

    @Test("CLDR categories per language", arguments: tables)
    func cldr(_ table: PluralTable) throws {
        let rules = PluralRules(localeIdentifier: table.locale)
        for row in table.rows {
            let operands = try #require(PluralOperands(row.number))
            #expect(rules.category(for: operands) == row.category, "\(table.locale) \(row.number)")
        }
    }

    @Test("Every supported language yields each of its categories at least once", arguments: tables)
    func coverage(_ table: PluralTable) {
        let rules = PluralRules(localeIdentifier: table.locale)
        let expected = Set(table.rows.map(\.category))
        let produced = Set(table.rows.compactMap { PluralOperands($0.number).map(rules.category(for:)) })
        #expect(produced == expected)
    }

    @Test(
        "Region and script subtags do not change the language rule, except pt-PT",
        arguments: [
            ("de-AT", PluralRules.Family.oneForIntegerOne), ("en_GB", .oneForIntegerOne), ("ja-JP", .otherOnly),
            ("zh-Hant-TW", .otherOnly), ("pt_BR", .oneForZeroOrOneWithMillions), ("pt", .oneForZeroOrOneWithMillions),
            ("pt-AO", .oneForZeroOrOneWithMillions), ("pt-PT", .oneForIntegerOneWithMillions), ("pt_PT", .oneForIntegerOneWithMillions),
            ("PT-pt", .oneForIntegerOneWithMillions), ("sr-Latn-RS", .serboCroatian), ("uk_UA", .eastSlavic),
        ])
    func regions(identifier: String, family: PluralRules.Family) {
        #expect(PluralRules(localeIdentifier: identifier).family == family)
    }

    @Test("Unknown languages use the other-only rule", arguments: ["", "xx", "garbage!!", "tlh", "cy", "123", "-"])
    func unknown(identifier: String) throws {
        let rules = PluralRules(localeIdentifier: identifier)
        #expect(rules.family == .otherOnly)
        for number in ["0", "1", "2", "1.0", "1000000"] {
            #expect(rules.category(for: try #require(PluralOperands(number))) == .other)
        }
    }

    @Test(
        "Operands of displayed numbers",
        arguments: [
            ("1", UInt64(1), 0, UInt64(0), UInt64(0), 0),
            ("1.0", 1, 1, 0, 0, 0),
            ("1.50", 1, 2, 50, 5, 1),
            ("-12.305", 12, 3, 305, 305, 3),
            ("0.000", 0, 3, 0, 0, 0),
            ("18446744073709551615", UInt64.max, 0, 0, 0, 0),
        ])
    func operands(text: String, i: UInt64, v: Int, f: UInt64, t: UInt64, w: Int) throws {
        let operands = try #require(PluralOperands(text))
        #expect(operands.i == i)
        #expect(operands.v == v)
        #expect(operands.f == f)
        #expect(operands.t == t)
        #expect(operands.w == w)
    }

    @Test("Malformed operand text is rejected", arguments: ["", "-", ".", "1.2.3", "1e5", "abc", "18446744073709551616", "0.1234567890123456789"])
    func malformedOperands(text: String) {
        #expect(PluralOperands(text) == nil)
    }

    /// Writes `locale number category` for every available locale and ~600 numbers to the file named by
    /// `SCORE_FORMATTING_PLURAL_DUMP`, for comparison with ICU via Tools/icu-plural-oracle.c.
    @Test("Dump categories for an ICU comparison", .enabled(if: ProcessInfo.processInfo.environment["SCORE_FORMATTING_PLURAL_DUMP"] != nil))
    func dumpForICU() throws {
        let path = try #require(ProcessInfo.processInfo.environment["SCORE_FORMATTING_PLURAL_DUMP"])
        var numbers = (0...250).map(String.init)
        numbers += ["1000", "1001", "1011", "1021", "1111", "10000", "100000", "1000000", "1000001", "2000000", "10000000", "21000000", "1000000000", "1112"]
        for whole in [0, 1, 2, 3, 4, 5, 7, 10, 11, 12, 14, 19, 21, 22, 25, 101, 102, 111, 1_000_000] {
            for fraction in ["0", "1", "2", "5", "00", "01", "10", "11", "12", "21", "22", "50", "000", "001", "011", "100", "111", "500"] {
                numbers.append("\(whole).\(fraction)")
            }
        }
        var lines = ""
        for identifier in Locale.availableIdentifiers.sorted() {
            let rules = PluralRules(localeIdentifier: identifier)
            for number in numbers {
                lines += "\(identifier) \(number) \(rules.category(for: try #require(PluralOperands(number))).rawValue)\n"
            }
        }
        try lines.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test(
        "The formatter's operands match the displayed text",
        arguments: [
            (Int64(100), 2, "1.00"), (-15, 1, "1.5"), (7, 3, "0.007"), (.min, 3, "9223372036854775.808"), (.max, 0, "9223372036854775807"),
        ])
    func formatterOperands(value: Int64, fractionDigits: Int, displayed: String) {
        #expect(ScoreFormatter.operands(value.magnitude, fractionDigits: fractionDigits) == PluralOperands(displayed))
    }
}
