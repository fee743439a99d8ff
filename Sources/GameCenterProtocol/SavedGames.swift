import Crypto
import Foundation

/// One stored version of a saved game. A save whose name has several current versions is in conflict.
public struct SavedGameInfo: Codable, Sendable, Equatable {
    /// The version's identifier; a write names the versions it was based on.
    public var versionID: String
    /// The save's name.
    public var name: String
    /// The name of the device that saved it.
    public var deviceName: String
    /// When it was saved (the server's clock).
    public var modifiedAt: Date
    /// Bytes.
    public var size: Int64
    /// SHA-256 of the data, lowercase hex.
    public var sha256: String
    /// Seconds played, when the game attached it (used by the `longestPlayed` policy).
    public var playedSeconds: Double?
    /// Progress, when the game attached it (used by the `highestProgress` policy).
    public var progress: Double?

    /// A version with every field given.
    public init(
        versionID: String, name: String, deviceName: String, modifiedAt: Date, size: Int64, sha256: String, playedSeconds: Double?, progress: Double?
    ) {
        self.versionID = versionID
        self.name = name
        self.deviceName = deviceName
        self.modifiedAt = modifiedAt
        self.size = size
        self.sha256 = sha256
        self.playedSeconds = playedSeconds
        self.progress = progress
    }
}

/// The limits of a game's saves, published with every list and enforced by the server.
public struct SavedGameLimits: Codable, Sendable, Equatable {
    /// The most bytes one save may have.
    public var saveBytes: Int64
    /// The most bytes the current versions of one player's saves of the game may have together.
    public var totalBytes: Int64
    /// The most saves (names) one player may have in the game.
    public var saves: Int
    /// The longest name, in characters.
    public var nameLength: Int
    /// The size of every upload chunk but the last.
    public var chunkBytes: Int

    /// Limits with every field given.
    public init(saveBytes: Int64, totalBytes: Int64, saves: Int, nameLength: Int, chunkBytes: Int) {
        self.saveBytes = saveBytes
        self.totalBytes = totalBytes
        self.saves = saves
        self.nameLength = nameLength
        self.chunkBytes = chunkBytes
    }
}

/// `GET /v1/saved-games`: every current version of the player's saves of the game, by name then date.
public struct SavedGameList: Codable, Sendable, Equatable {
    /// The current versions.
    public var saves: [SavedGameInfo]
    /// The game's limits.
    public var limits: SavedGameLimits

    /// A list of `saves` under `limits`.
    public init(saves: [SavedGameInfo], limits: SavedGameLimits) {
        self.saves = saves
        self.limits = limits
    }
}

/// `POST /v1/saved-games/uploads`: starts the upload of a new version of save `name`.
public struct SavedGameUploadBody: Codable, Sendable, Equatable {
    /// The save's name.
    public var name: String
    /// The versions this one was made from: the save's current version (or, resolving a conflict, every
    /// conflicting version); empty for a save the device never saw.
    public var basedOn: [String]
    /// The name of the device saving it.
    public var deviceName: String
    /// Bytes.
    public var size: Int64
    /// SHA-256 of the whole data, lowercase hex; checked when the upload is finished.
    public var sha256: String
    /// Seconds played, when the game attaches it.
    public var playedSeconds: Double?
    /// Progress, when the game attaches it.
    public var progress: Double?
    /// The whole data, for a save of at most ``SavedGameUploadBody/inlineBytes``: saved in this one request, with no
    /// chunks (the answer's ``SavedGameUpload/saved``).
    public var data: Data?

    /// The most bytes a save may carry as ``data`` (base64 in the JSON body) in its upload's first request.
    public static let inlineBytes = 256 << 10
    /// The most bytes a save may carry as the raw body of its upload's first request (`Content-Type:
    /// application/octet-stream`, this body's other fields as JSON in the ``header``): saved in that one request.
    public static let wholeBytes = 1 << 20
    /// The header carrying this body's fields as JSON (non-ASCII characters escaped as `\uXXXX`) when the request's
    /// body is the save's bytes.
    public static let header = "X-GameCenter-Save"

    /// An upload body with every field given.
    public init(
        name: String, basedOn: [String], deviceName: String, size: Int64, sha256: String, playedSeconds: Double? = nil, progress: Double? = nil,
        data: Data? = nil
    ) {
        self.name = name
        self.basedOn = basedOn
        self.deviceName = deviceName
        self.size = size
        self.sha256 = sha256
        self.playedSeconds = playedSeconds
        self.progress = progress
        self.data = data
    }
}

/// An upload in progress: its chunks are sent with `PUT /v1/saved-games/uploads/{uploadID}/chunks/{index}`, in any
/// order, again after a dropped connection; `POST …/finish` makes the version current.
public struct SavedGameUpload: Codable, Sendable, Equatable {
    /// The upload's id (the version's, once finished).
    public var uploadID: String
    /// The size of every chunk but the last.
    public var chunkBytes: Int
    /// How many chunks the data is cut into.
    public var chunks: Int
    /// The chunks the server has, ascending.
    public var receivedChunks: [Int]
    /// When the data came with the request: the save's current versions after it (the upload is finished).
    public var saved: SavedGameVersions?

    /// An upload with every field given.
    public init(uploadID: String, chunkBytes: Int, chunks: Int, receivedChunks: [Int], saved: SavedGameVersions? = nil) {
        self.uploadID = uploadID
        self.chunkBytes = chunkBytes
        self.chunks = chunks
        self.receivedChunks = receivedChunks
        self.saved = saved
    }
}

/// The current versions of one save: one, or several when in conflict.
public struct SavedGameVersions: Codable, Sendable, Equatable {
    /// The save's name.
    public var name: String
    /// Its current versions, oldest first.
    public var versions: [SavedGameInfo]

    /// The current `versions` of save `name`.
    public init(name: String, versions: [SavedGameInfo]) {
        self.name = name
        self.versions = versions
    }
}

/// The payload of a ``EventKind/savedGame`` event: a save of the player changed; more than one version means it is
/// in conflict now.
public struct SavedGameEventInfo: Codable, Sendable, Equatable {
    /// The game whose save it is.
    public var bundleID: String
    /// The save's current versions.
    public var save: SavedGameVersions

    /// A change of `save` in game `bundleID`.
    public init(bundleID: String, save: SavedGameVersions) {
        self.bundleID = bundleID
        self.save = save
    }
}

/// Saved-game data's SHA-256 as the wire carries it: 64 lowercase hex digits. The SDK announces it, the server checks it.
public enum SavedGameDigest {
    /// The SHA-256 of `data`.
    public static func sha256(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    /// A digest computed piece by piece (the server hashes a save a chunk at a time).
    public static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
