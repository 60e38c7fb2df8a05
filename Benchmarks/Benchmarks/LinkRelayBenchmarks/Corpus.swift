import Foundation

/// 1,000 realistic provider links, the same in every run: LinkForty short links with template
/// slugs, LimeLink project links with encoded `full_request_url`-style values, Dynalinks and
/// Paylisher campaign links, app-scheme links, UTM and custom parameters, percent-encoded and
/// non-ASCII values.
enum Corpus {
    static let links: [URL] = {
        var generator = SeededGenerator(seed: 0x4C69_6E6B_5265_6C61)
        let words = ["spring", "summer-sale", "p42", "Xk9_2bQz", "wallet", "reviews", "cart", "onboarding", "ref", "promo"]
        let sources = ["instagram", "newsletter", "google", "tiktok", "partner%20site", "caf%C3%A9"]
        func word() -> String { words[Int(generator.next() % UInt64(words.count))] }
        func number() -> Int { Int(generator.next() % 100_000) }
        func utm() -> String {
            "utm_source=\(sources[Int(generator.next() % UInt64(sources.count))])&utm_medium=social&utm_campaign=\(word())_\(number())"
        }
        var links: [URL] = []
        for index in 0..<1000 {
            let text: String
            switch index % 8 {
            case 0: text = "https://go.acme.app/\(word())\(number())?\(utm())"
            case 1: text = "https://go.acme.app/k3m9x2qa/\(word())\(number())?\(utm())&productId=\(number())&color=red"
            case 2: text = "https://shop.limelink.org/link/\(word())?\(utm())&ref=a+b&next=%2Fproducts%2F\(number())%3Fx%3D1"
            case 3: text = "https://acme.dynalinks.app/\(word())/\(number())?referrer=utm_source%3Dfacebook%26utm_campaign%3D\(word())"
            case 4: text = "https://link.paylisher.com/c/\(word())\(number())"
            case 5: text = "diyetim://products/\(number())/reviews?keyName=\(word().uppercased())&jid=j-\(number())&auth=required"
            case 6: text = "acmeshop://cart?coupon=SPRING\(number())&items=\(number()),\(number())&note=%E2%9C%93%20gift"
            default: text = "https://go.acme.app/products/\(number())?campaign_id=c\(number())&source=email&q=caf%C3%A9+cr%C3%A8me#top"
            }
            guard let url = URL(string: text) else { fatalError("corpus URL \(text)") }
            links.append(url)
        }
        return links
    }()
}

/// SplitMix64: the same sequence everywhere, so the corpus never changes between runs.
struct SeededGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
