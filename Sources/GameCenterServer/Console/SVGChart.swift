import Foundation
import Hummingbird

/// A line chart of one series as an SVG document, drawn on the server (no script, no external library): the
/// console's charts of the last hours. Every text in it is escaped; the points are numbers.
struct SVGChart: Sendable {
    /// The drawing's size in SVG units (it scales to its box).
    static let width = 340.0, height = 150.0
    private static let left = 40.0, right = 8.0, top = 10.0, bottom = 22.0

    /// The chart's title (its accessible name).
    let title: String
    /// The points: milliseconds since 1970 and values, oldest first.
    let points: [(millis: Int64, value: Double)]

    /// The SVG document.
    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        let maximum = max(Self.niceCeiling(points.map(\.value).max() ?? 0), 1)
        let first = points.first?.millis ?? 0, last = points.last?.millis ?? 0
        let span = Double(max(last - first, 1))
        func x(_ millis: Int64) -> Double { Self.left + (points.count < 2 ? plotWidth : Double(millis - first) / span * plotWidth) }
        func y(_ value: Double) -> Double { Self.top + plotHeight - (maximum > 0 ? value / maximum * plotHeight : 0) }
        var body = ""
        for step in 0...2 {
            let value = maximum * Double(step) / 2
            let lineY = Self.number(y(value))
            body += "<line x1=\"\(Self.number(Self.left))\" y1=\"\(lineY)\" x2=\"\(Self.number(Self.width - Self.right))\" y2=\"\(lineY)\" class=\"grid\"/>"
            body += "<text x=\"\(Self.number(Self.left - 6))\" y=\"\(lineY)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(Self.number(value))</text>"
        }
        if let start = points.first {
            body += "<text x=\"\(Self.number(Self.left))\" y=\"\(Self.number(Self.height - 6))\">\(Self.clock(start.millis))</text>"
        }
        if let end = points.last, points.count > 1 {
            body +=
                "<text x=\"\(Self.number(Self.width - Self.right))\" y=\"\(Self.number(Self.height - 6))\" text-anchor=\"end\">\(Self.clock(end.millis)) UTC</text>"
        }
        if points.isEmpty {
            body += "<text x=\"\(Self.number(Self.width / 2))\" y=\"\(Self.number(Self.height / 2))\" text-anchor=\"middle\">No samples yet</text>"
        } else {
            let line = points.map { "\(Self.number(x($0.millis))),\(Self.number(y($0.value)))" }.joined(separator: " ")
            body += "<polyline points=\"\(line)\" class=\"line\"/>"
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" aria-label="\(Self.escaped(title))">\
            <title>\(Self.escaped(title))</title>\
            <style>text{font:11px system-ui,sans-serif;fill:#3a3a40}.grid{stroke:#d7d7dc;stroke-width:1}.line{fill:none;stroke:#1a5fb4;stroke-width:2}</style>\
            \(body)</svg>
            """
    }

    /// The chart as an HTTP response (an SVG image, never cached, never sniffed as another type).
    var response: Response {
        Response(
            status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    /// The chart named `file` (`NAME.svg`) among `names`, or the page-not-found error for `path`.
    static func named<Chart>(_ file: String, among charts: [Chart], name: (Chart) -> String, path: String) throws -> Chart {
        guard file.hasSuffix(".svg"), let chart = charts.first(where: { name($0) == file.dropLast(4) }) else { throw APIError.pageNotFound(path) }
        return chart
    }

    /// The smallest of 1, 2 or 5 times a power of ten at or above `value` (the chart's top).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        let power = pow(10, floor(log10(value)))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= value } ?? value
    }

    /// `value` with at most one decimal, no trailing `.0`.
    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// `HH:MM` of `millis` in UTC.
    private static func clock(_ millis: Int64) -> String {
        let minutes = Int((millis / 60_000) % (24 * 60))
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    private static func escaped(_ text: String) -> String {
        PageHTMLEscaping().escapeText(text)
    }
}
