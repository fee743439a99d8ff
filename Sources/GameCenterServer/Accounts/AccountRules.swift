import Foundation
import GameCenterProtocol

/// The checks on what a player types: account names, passwords, aliases, status messages.
enum AccountRules {
    /// A lower-cased account name, or `invalidParameter` saying what is allowed.
    static func accountName(_ raw: String) throws -> String {
        let name = raw.lowercased()
        let allowed = name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "._-@+".unicodeScalars.contains($0) }
        guard Limits.accountNameLength.contains(name.count), allowed else {
            throw APIError.invalidAccountName
        }
        return name
    }

    static func password(_ password: String) throws {
        guard Limits.passwordLength.contains(password.count) else {
            throw APIError.invalidPassword
        }
        // Every character counts: bcrypt reads a pre-hash of the whole password (``Credentials``).
    }

    /// A trimmed alias, or `invalidParameter`.
    ///
    /// Besides control characters, an alias may not hold what renders as nothing or moves other text: format
    /// characters (zero-width spaces and joiners, bidi marks, embeddings and isolates U+2066–2069), other
    /// default-ignorable code points (Hangul fillers), line and paragraph separators, spaces other than U+0020,
    /// private-use and unassigned code points.
    static func alias(_ raw: String) throws -> String {
        // Only plain spaces and line ends are trimmed: Foundation's white space includes U+200B, which must be
        // refused, not silently dropped.
        let alias = raw.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n"))
        guard Limits.aliasLength.contains(alias.count) else {
            throw APIError.aliasLength(alias.count)
        }
        if let hidden = alias.unicodeScalars.first(where: isHiddenInAlias) {
            throw APIError.hiddenCharacterInAlias(hidden)
        }
        return alias
    }

    /// Whether `scalar` is one an alias may not hold (see ``alias(_:)``).
    static func isHiddenInAlias(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        case .spaceSeparator:
            return scalar != " "
        default:
            return properties.isDefaultIgnorableCodePoint
        }
    }

    /// A status message (empty clears it), or `playerStatusExceedsMaximumLength` / `playerStatusInvalid`.
    static func status(_ raw: String) throws -> String {
        guard raw.count <= Limits.maximumStatusLength else {
            throw APIError.statusTooLong(raw.count)
        }
        guard !containsControlCharacters(raw) else {
            throw APIError.statusInvalid
        }
        return raw
    }

    static func containsControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format && $0.value == 0x202E }
    }
}

extension APIError {
    /// An account name breaks the naming rule.
    static let invalidAccountName = APIError(
        .accountInvalidName,
        "account names are \(Limits.accountNameLength.lowerBound) to \(Limits.accountNameLength.upperBound) characters: letters a-z, digits and . _ - @ +")
    /// A password is too short or too long.
    static let invalidPassword = APIError(
        .accountInvalidPassword, "passwords are \(Limits.passwordLength.lowerBound) to \(Limits.passwordLength.upperBound) characters")
    /// An alias of `count` characters.
    static func aliasLength(_ count: Int) -> APIError {
        APIError(.accountInvalidAlias, "aliases are \(Limits.aliasLength.lowerBound) to \(Limits.aliasLength.upperBound) characters; this one has \(count)")
    }
    /// An alias holding a character that renders as nothing or moves other text.
    static func hiddenCharacterInAlias(_ scalar: Unicode.Scalar) -> APIError {
        APIError(
            .accountInvalidAlias,
            "aliases cannot contain control, invisible or text-direction characters (U+\(String(scalar.value, radix: 16, uppercase: true)) here)")
    }
    /// An alias that looks like `existing`, another player's alias, without being the same.
    static func aliasLookAlike(_ alias: String, _ existing: String) -> APIError {
        APIError(
            .accountAliasLookAlike,
            "the alias “\(alias)” looks like another player's alias “\(existing)”; choose one that cannot be mistaken for it (the same alias as theirs is allowed)"
        )
    }
    /// A status message of `count` characters.
    static func statusTooLong(_ count: Int) -> APIError {
        APIError(.accountStatusTooLong, "status messages are at most \(Limits.maximumStatusLength) characters; this one has \(count)")
    }
    /// A status message holding control characters.
    static let statusInvalid = APIError(.accountStatusInvalid, "status messages cannot contain control characters")
}
