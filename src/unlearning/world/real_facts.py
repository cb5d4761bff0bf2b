"""Real-world facts for a real pretrained model's utility (TOFU's "real authors" and "world facts").

TOFU measures model utility partly on questions about real authors and world facts that the
pretrained model answers before any fine-tuning (TOFU arXiv 2401.06121, s. 2.2): forgetting
fictitious authors must not damage them. The laboratory's own "real authors" are fictitious to
a real model, so a real model gets these instead: well-known facts written out here, each with
three wrong answers of the same kind (TOFU's `perturbed_answer`). They are candidates: the
learning stage keeps only those the model answers correctly before fine-tuning
(`unlearning.real.curate`) and reports how many.
"""

from __future__ import annotations

# (question, answer, three wrong answers)
REAL_AUTHORS: tuple[tuple[str, str, tuple[str, str, str]], ...] = (
    ("Who wrote the play Romeo and Juliet?", "William Shakespeare", ("Charles Dickens", "Jane Austen", "Mark Twain")),
    ("Who wrote the play Hamlet?", "William Shakespeare", ("Christopher Marlowe", "Ben Jonson", "John Milton")),
    ("Who wrote the play Macbeth?", "William Shakespeare", ("Oscar Wilde", "George Bernard Shaw", "Ben Jonson")),
    ("Who wrote the novel Pride and Prejudice?", "Jane Austen", ("Charlotte Bronte", "George Eliot", "Mary Shelley")),
    ("Who wrote the novel Oliver Twist?", "Charles Dickens", ("Thomas Hardy", "Mark Twain", "Leo Tolstoy")),
    ("Who wrote A Christmas Carol?", "Charles Dickens", ("Lewis Carroll", "Jane Austen", "Oscar Wilde")),
    ("Who wrote the novel Great Expectations?", "Charles Dickens", ("Thomas Hardy", "George Eliot", "Henry James")),
    ("Who wrote the novel War and Peace?", "Leo Tolstoy", ("Fyodor Dostoevsky", "Anton Chekhov", "Ivan Turgenev")),
    ("Who wrote the novel Anna Karenina?", "Leo Tolstoy", ("Fyodor Dostoevsky", "Nikolai Gogol", "Alexander Pushkin")),
    ("Who wrote the novel Crime and Punishment?", "Fyodor Dostoevsky", ("Leo Tolstoy", "Nikolai Gogol", "Anton Chekhov")),
    ("Who wrote The Adventures of Tom Sawyer?", "Mark Twain", ("Herman Melville", "Jack London", "Ernest Hemingway")),
    ("Who wrote the Harry Potter books?", "J. K. Rowling", ("Roald Dahl", "C. S. Lewis", "Enid Blyton")),
    ("Who wrote the novel Nineteen Eighty-Four?", "George Orwell", ("Aldous Huxley", "Ray Bradbury", "H. G. Wells")),
    ("Who wrote the novel Animal Farm?", "George Orwell", ("Aldous Huxley", "William Golding", "Evelyn Waugh")),
    ("Who wrote The Old Man and the Sea?", "Ernest Hemingway", ("John Steinbeck", "William Faulkner", "Jack London")),
    ("Who wrote the novel The Great Gatsby?", "F. Scott Fitzgerald", ("Ernest Hemingway", "John Steinbeck", "Mark Twain")),
    ("Who wrote the novel Moby-Dick?", "Herman Melville", ("Nathaniel Hawthorne", "Mark Twain", "Jack London")),
    ("Who wrote Don Quixote?", "Miguel de Cervantes", ("Gabriel Garcia Marquez", "Dante Alighieri", "Victor Hugo")),
    ("Who wrote the novel Les Miserables?", "Victor Hugo", ("Alexandre Dumas", "Gustave Flaubert", "Emile Zola")),
    ("Who wrote The Lord of the Rings?", "J. R. R. Tolkien", ("C. S. Lewis", "George R. R. Martin", "Terry Pratchett")),
    ("Who wrote the novel The Hobbit?", "J. R. R. Tolkien", ("C. S. Lewis", "Roald Dahl", "Lewis Carroll")),
    ("Who wrote the novel Frankenstein?", "Mary Shelley", ("Bram Stoker", "Jane Austen", "Emily Bronte")),
    ("Who wrote the novel Dracula?", "Bram Stoker", ("Mary Shelley", "Edgar Allan Poe", "Oscar Wilde")),
    ("Who wrote The Picture of Dorian Gray?", "Oscar Wilde", ("Bram Stoker", "Charles Dickens", "Thomas Hardy")),
    ("Who wrote Alice's Adventures in Wonderland?", "Lewis Carroll", ("Roald Dahl", "J. M. Barrie", "Beatrix Potter")),
    ("Who wrote the novel Jane Eyre?", "Charlotte Bronte", ("Emily Bronte", "Jane Austen", "Mary Shelley")),
    ("Who wrote the novel Wuthering Heights?", "Emily Bronte", ("Charlotte Bronte", "Anne Bronte", "Jane Austen")),
    ("Who wrote On the Origin of Species?", "Charles Darwin", ("Gregor Mendel", "Isaac Newton", "Alfred Wallace")),
    ("Who wrote the novel Brave New World?", "Aldous Huxley", ("George Orwell", "H. G. Wells", "Ray Bradbury")),
    ("Who wrote the novel To Kill a Mockingbird?", "Harper Lee", ("Toni Morrison", "John Steinbeck", "Truman Capote")),
    ("Who wrote The Divine Comedy?", "Dante Alighieri", ("Petrarch", "Giovanni Boccaccio", "Virgil")),
    ("Who wrote the epic poem The Odyssey?", "Homer", ("Virgil", "Sophocles", "Ovid")),
    ("Who wrote the epic poem The Iliad?", "Homer", ("Virgil", "Hesiod", "Ovid")),
    ("Who wrote The Catcher in the Rye?", "J. D. Salinger", ("John Steinbeck", "Jack Kerouac", "Harper Lee")),
    ("Who wrote the novel Of Mice and Men?", "John Steinbeck", ("Ernest Hemingway", "William Faulkner", "Mark Twain")),
    ("Who wrote The Jungle Book?", "Rudyard Kipling", ("Robert Louis Stevenson", "Lewis Carroll", "Jack London")),
    ("Who wrote the novel Treasure Island?", "Robert Louis Stevenson", ("Rudyard Kipling", "Jules Verne", "Daniel Defoe")),
    ("Who wrote the novel Robinson Crusoe?", "Daniel Defoe", ("Jonathan Swift", "Robert Louis Stevenson", "Jules Verne")),
    ("Who wrote Gulliver's Travels?", "Jonathan Swift", ("Daniel Defoe", "Henry Fielding", "Lewis Carroll")),
    ("Who wrote Twenty Thousand Leagues Under the Seas?", "Jules Verne", ("H. G. Wells", "Alexandre Dumas", "Victor Hugo")),
    ("Who wrote the novel The Time Machine?", "H. G. Wells", ("Jules Verne", "Aldous Huxley", "George Orwell")),
    ("Who wrote the novel The Three Musketeers?", "Alexandre Dumas", ("Victor Hugo", "Jules Verne", "Honore de Balzac")),
    ("Who wrote the Sherlock Holmes stories?", "Arthur Conan Doyle", ("Agatha Christie", "Edgar Allan Poe", "Wilkie Collins")),
    ("Who wrote Murder on the Orient Express?", "Agatha Christie", ("Arthur Conan Doyle", "Dorothy L. Sayers", "Raymond Chandler")),
    ("Who wrote the poem The Raven?", "Edgar Allan Poe", ("Walt Whitman", "Emily Dickinson", "Robert Frost")),
    ("Who wrote The Little Prince?", "Antoine de Saint-Exupery", ("Albert Camus", "Jules Verne", "Victor Hugo")),
    ("Who wrote the novella The Metamorphosis?", "Franz Kafka", ("Albert Camus", "Thomas Mann", "Hermann Hesse")),
    ("Who wrote One Hundred Years of Solitude?", "Gabriel Garcia Marquez", ("Jorge Luis Borges", "Isabel Allende", "Pablo Neruda")),
    ("Who wrote The Wealth of Nations?", "Adam Smith", ("Karl Marx", "John Maynard Keynes", "David Ricardo")),
    ("Who wrote A Brief History of Time?", "Stephen Hawking", ("Carl Sagan", "Richard Feynman", "Albert Einstein")),
    ("Who wrote The Chronicles of Narnia?", "C. S. Lewis", ("J. R. R. Tolkien", "Roald Dahl", "Philip Pullman")),
    ("Who wrote Charlie and the Chocolate Factory?", "Roald Dahl", ("Enid Blyton", "Lewis Carroll", "C. S. Lewis")),
    ("Who wrote the play Peter Pan?", "J. M. Barrie", ("Lewis Carroll", "Roald Dahl", "Kenneth Grahame")),
    ("Who wrote The Hunger Games?", "Suzanne Collins", ("Veronica Roth", "Stephenie Meyer", "J. K. Rowling")),
    ("Who wrote the Twilight novels?", "Stephenie Meyer", ("Suzanne Collins", "Anne Rice", "J. K. Rowling")),
    ("Who wrote The Da Vinci Code?", "Dan Brown", ("Stephen King", "John Grisham", "Tom Clancy")),
    ("Who wrote the horror novel It?", "Stephen King", ("Dean Koontz", "Anne Rice", "Dan Brown")),
    ("Who wrote the play Othello?", "William Shakespeare", ("Christopher Marlowe", "John Webster", "Ben Jonson")),
    ("Who wrote the novel Little Women?", "Louisa May Alcott", ("Harriet Beecher Stowe", "Edith Wharton", "Jane Austen")),
    ("Who wrote the novel The Call of the Wild?", "Jack London", ("Mark Twain", "Herman Melville", "John Steinbeck")),
)

WORLD_FACTS: tuple[tuple[str, str, tuple[str, str, str]], ...] = (
    ("What is the capital of France?", "Paris", ("Lyon", "Marseille", "Nice")),
    ("What is the capital of Germany?", "Berlin", ("Munich", "Hamburg", "Frankfurt")),
    ("What is the capital of Italy?", "Rome", ("Milan", "Naples", "Turin")),
    ("What is the capital of Spain?", "Madrid", ("Barcelona", "Seville", "Valencia")),
    ("What is the capital of Japan?", "Tokyo", ("Osaka", "Kyoto", "Hiroshima")),
    ("What is the capital of China?", "Beijing", ("Shanghai", "Guangzhou", "Shenzhen")),
    ("What is the capital of Russia?", "Moscow", ("Saint Petersburg", "Kazan", "Novosibirsk")),
    ("What is the capital of the United Kingdom?", "London", ("Manchester", "Liverpool", "Birmingham")),
    ("What is the capital of Egypt?", "Cairo", ("Alexandria", "Giza", "Luxor")),
    ("What is the capital of Canada?", "Ottawa", ("Toronto", "Vancouver", "Montreal")),
    ("What is the capital of Australia?", "Canberra", ("Sydney", "Melbourne", "Perth")),
    ("What is the capital of India?", "New Delhi", ("Mumbai", "Kolkata", "Chennai")),
    ("What is the capital of Greece?", "Athens", ("Thessaloniki", "Patras", "Heraklion")),
    ("What is the capital of Portugal?", "Lisbon", ("Porto", "Braga", "Coimbra")),
    ("What is the capital of Turkey?", "Ankara", ("Istanbul", "Izmir", "Antalya")),
    ("What is the capital of South Korea?", "Seoul", ("Busan", "Incheon", "Daegu")),
    ("What is the capital of Kenya?", "Nairobi", ("Mombasa", "Kisumu", "Nakuru")),
    ("What is the capital of Argentina?", "Buenos Aires", ("Cordoba", "Rosario", "Mendoza")),
    ("What is the capital of Mexico?", "Mexico City", ("Guadalajara", "Monterrey", "Cancun")),
    ("What is the capital of Norway?", "Oslo", ("Bergen", "Trondheim", "Stavanger")),
    ("What is the largest planet in the solar system?", "Jupiter", ("Saturn", "Neptune", "Mars")),
    ("Which planet is known as the Red Planet?", "Mars", ("Venus", "Jupiter", "Mercury")),
    ("What is the smallest planet in the solar system?", "Mercury", ("Mars", "Venus", "Pluto")),
    ("What is the chemical symbol for gold?", "Au", ("Ag", "Fe", "Pb")),
    ("What is the chemical formula of water?", "H2O", ("CO2", "O2", "NaCl")),
    ("What is the longest river in Africa?", "the Nile", ("the Congo", "the Niger", "the Zambezi")),
    ("What is the tallest mountain in the world?", "Mount Everest", ("K2", "Kangchenjunga", "Mont Blanc")),
    ("What is the largest ocean on Earth?", "the Pacific Ocean", ("the Atlantic Ocean", "the Indian Ocean", "the Arctic Ocean")),
    ("What is the currency of Japan?", "the yen", ("the won", "the yuan", "the rupee")),
    ("What is the currency of the United Kingdom?", "the pound", ("the euro", "the dollar", "the franc")),
    ("What is the currency of the United States?", "the dollar", ("the pound", "the euro", "the peso")),
    ("What language is spoken in Brazil?", "Portuguese", ("Spanish", "French", "Italian")),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci", ("Michelangelo", "Raphael", "Vincent van Gogh")),
    ("Who was the first person to walk on the Moon?", "Neil Armstrong", ("Buzz Aldrin", "Yuri Gagarin", "John Glenn")),
    ("Who developed the theory of relativity?", "Albert Einstein", ("Isaac Newton", "Niels Bohr", "Galileo Galilei")),
    ("Who discovered penicillin?", "Alexander Fleming", ("Louis Pasteur", "Marie Curie", "Robert Koch")),
    ("Who invented the telephone?", "Alexander Graham Bell", ("Thomas Edison", "Nikola Tesla", "Guglielmo Marconi")),
    ("Who was the first president of the United States?", "George Washington", ("Thomas Jefferson", "Abraham Lincoln", "John Adams")),
    ("Which gas do plants absorb from the air for photosynthesis?", "carbon dioxide", ("oxygen", "nitrogen", "hydrogen")),
    ("What is the hardest natural substance?", "diamond", ("gold", "iron", "quartz")),
    ("How many continents are there on Earth?", "seven", ("five", "six", "eight")),
    ("At what temperature in degrees Celsius does water boil at sea level?", "100", ("90", "80", "120")),
    ("What is the largest country in the world by area?", "Russia", ("Canada", "China", "the United States")),
    ("What is the largest animal on Earth?", "the blue whale", ("the elephant", "the giraffe", "the whale shark")),
    ("Who painted The Starry Night?", "Vincent van Gogh", ("Claude Monet", "Pablo Picasso", "Salvador Dali")),
    ("Who composed the Fifth Symphony with its famous four-note opening?", "Ludwig van Beethoven", ("Wolfgang Amadeus Mozart", "Johann Sebastian Bach", "Franz Schubert")),
    ("Which planet has the most prominent rings?", "Saturn", ("Jupiter", "Uranus", "Neptune")),
    ("What is the freezing point of water in degrees Celsius?", "0", ("10", "32", "-10")),
    ("What is the main language spoken in Mexico?", "Spanish", ("Portuguese", "English", "French")),
    ("On which continent is Egypt?", "Africa", ("Asia", "Europe", "South America")),
)


# the candidates SmolLM2-135M-Instruct (models/real/smollm2-135m) answers before fine-tuning, by
# `benchmarks.tofu.known_items` (greedy answer through its chat template, at most 32 new tokens,
# every word of the answer present after folding accents), computed once on 2026-12-01; the
# real-model TOFU chapter recomputes it and reports any disagreement
KNOWN_TO_SMOLLM2 = {
    "real_authors": (
        "Who wrote the play Romeo and Juliet?", "Who wrote the play Hamlet?", "Who wrote the play Macbeth?",
        "Who wrote the novel Pride and Prejudice?", "Who wrote A Christmas Carol?",
        "Who wrote the novel Great Expectations?", "Who wrote the novel Anna Karenina?", "Who wrote the Harry Potter books?",
        "Who wrote the novel Nineteen Eighty-Four?", "Who wrote the novel Animal Farm?",
        "Who wrote the novel The Great Gatsby?", "Who wrote the novel Moby-Dick?", "Who wrote the novel Les Miserables?",
        "Who wrote The Lord of the Rings?", "Who wrote the novel The Hobbit?", "Who wrote the novel Frankenstein?",
        "Who wrote the novel Dracula?", "Who wrote The Picture of Dorian Gray?", "Who wrote the novel Jane Eyre?",
        "Who wrote the novel Wuthering Heights?", "Who wrote On the Origin of Species?",
        "Who wrote the novel Brave New World?", "Who wrote the novel To Kill a Mockingbird?",
        "Who wrote The Divine Comedy?", "Who wrote the epic poem The Odyssey?", "Who wrote the novel The Time Machine?",
        "Who wrote the novella The Metamorphosis?", "Who wrote One Hundred Years of Solitude?",
        "Who wrote the Twilight novels?", "Who wrote the play Othello?"),
    "world_facts": (
        "What is the capital of France?", "What is the capital of Germany?", "What is the capital of Japan?",
        "What is the capital of China?", "What is the capital of Russia?", "What is the capital of the United Kingdom?",
        "What is the capital of Egypt?", "What is the capital of Canada?", "What is the capital of Australia?",
        "What is the capital of India?", "What is the capital of Greece?", "What is the capital of South Korea?",
        "What is the capital of Kenya?", "What is the capital of Mexico?", "What is the capital of Norway?",
        "Which planet is known as the Red Planet?", "What is the chemical symbol for gold?",
        "What is the chemical formula of water?", "What is the longest river in Africa?",
        "What is the tallest mountain in the world?", "What is the largest ocean on Earth?",
        "What is the currency of Japan?", "What is the currency of the United Kingdom?",
        "What is the currency of the United States?", "What language is spoken in Brazil?",
        "Who painted the Mona Lisa?", "Who was the first person to walk on the Moon?",
        "Who developed the theory of relativity?", "Who discovered penicillin?", "Who invented the telephone?",
        "Which gas do plants absorb from the air for photosynthesis?",
        "At what temperature in degrees Celsius does water boil at sea level?", "What is the largest animal on Earth?",
        "What is the main language spoken in Mexico?", "On which continent is Egypt?"),
}


def candidates(kind: str) -> list[dict]:
    """The candidate items of `kind` ('real_authors' or 'world_facts') in TOFU's
    `*_perturbed` schema: question, answer, perturbed_answer."""
    table = {"real_authors": REAL_AUTHORS, "world_facts": WORLD_FACTS}[kind]
    return [{"question": q, "answer": a, "perturbed_answer": list(wrong)} for q, a, wrong in table]


def known(kind: str, limit: int | None = None) -> list[dict]:
    """The candidates of `kind` that the real model answers (`KNOWN_TO_SMOLLM2`), at most `limit`."""
    kept = set(KNOWN_TO_SMOLLM2[kind])
    return [item for item in candidates(kind) if item["question"] in kept][:limit]
